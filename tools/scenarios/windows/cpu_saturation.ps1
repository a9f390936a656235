# cpu_saturation.ps1: two busy threads per CPU (hs_load burn) for 30 s (-Short: 3 s) while both captures
# record. MANUAL, ADMIN-ONLY (see common.ps1):
#   powershell -ExecutionPolicy Bypass -File tools\scenarios\windows\cpu_saturation.ps1 -Bin build-msvc [-Short]
param(
    [Parameter(Mandatory = $true)][string]$Bin,
    [string]$Rules,
    [string]$Out,
    [switch]$Short,
    [switch]$KeepSnap
)
. (Join-Path $PSScriptRoot 'common.ps1')
$secs = 30
if ($Short) { $secs = 3 }
$threads = 2 * [Environment]::ProcessorCount

$trigger = {
    param($ctx)
    $o = Join-Path $ctx.Dir 'burn.out'
    $p = Start-Child $ctx $ctx.Load @('burn', "$threads", "$secs") $o
    $ctx.Vars['burn_pid'] = $p.Id
    $ctx.Vars['burn_threads'] = $threads
    $code = Wait-Child $p ($secs + 60)
    if ($code -ne 0) { throw "the burner did not exit 0 (exit $code)" }
}
$signature = {
    param($ctx)
    $pid0 = [int]$ctx.Vars['burn_pid']
    $exits = @(Get-Exits $ctx.Analyze $ctx.Rules $ctx.Filtered | Where-Object { [int]$_.pid -eq $pid0 })
    $threadStarts = Get-Count $ctx.FilteredCounts $GuidKernelProcess @(3)
    New-Check "the burner (pid $pid0) exited with 0" (($exits.Count -gt 0) -and ([long]$exits[0].code -eq 0)) "$($exits.Count) exit(s) of that pid"
    New-Check "threads start (Kernel-Process ThreadStart, id 3), at least the burner's $($threads - 1)" ($threadStarts -ge ($threads - 1)) "$threadStarts in the filtered trace"
}
exit (Invoke-Scenario -Name cpu_saturation -Bin $Bin -Rules $Rules -Out $Out -Short:$Short -KeepSnap:$KeepSnap `
        -TriggerSeconds ($secs + 10) -Trigger $trigger -Signature $signature)
