# baseline.ps1: the idle scenario on Windows: both captures on an idle machine; one marker process (hs_load
# idle) with a known lifetime shows the capture sees process lifetimes. MANUAL, ADMIN-ONLY (see common.ps1):
#   powershell -ExecutionPolicy Bypass -File tools\scenarios\windows\baseline.ps1 -Bin build-msvc [-Short]
param(
    [Parameter(Mandatory = $true)][string]$Bin,
    [string]$Rules,
    [string]$Out,
    [switch]$Short,
    [switch]$KeepSnap
)
. (Join-Path $PSScriptRoot 'common.ps1')
$idle = 40
if ($Short) { $idle = 3 }

$trigger = {
    param($ctx)
    $o = Join-Path $ctx.Dir 'marker.out'
    $p = Start-Child $ctx $ctx.Load @('idle', '0.5') $o
    $ctx.Vars['marker_pid'] = $p.Id
    $code = Wait-Child $p 30
    if ($code -ne 0) { throw "the marker process did not exit 0 (exit $code)" }
    Start-Sleep -Seconds $idle
}
$signature = {
    param($ctx)
    $pid0 = [int]$ctx.Vars['marker_pid']
    $exits = @(Get-Exits $ctx.Analyze $ctx.Rules $ctx.Filtered | Where-Object { [int]$_.pid -eq $pid0 })
    $starts = Get-Count $ctx.FilteredCounts $GuidKernelProcess @(1)
    New-Check 'processes start (Kernel-Process ProcessStart, id 1)' ($starts -gt 0) "$starts in the filtered trace"
    New-Check "the marker process (pid $pid0) exited with 0" (($exits.Count -gt 0) -and ([long]$exits[0].code -eq 0)) "$($exits.Count) exit(s) of that pid"
}
exit (Invoke-Scenario -Name baseline -Bin $Bin -Rules $Rules -Out $Out -Short:$Short -KeepSnap:$KeepSnap `
        -TriggerSeconds ($idle + 5) -Trigger $trigger -Signature $signature)
