# memory_pressure.ps1: a hog (hs_load hog) takes memory up to 70% of the machine's RAM (-Short: 30%), holds it,
# and is killed. Windows has no per-group OOM killer to aim at, so this is the original tool's experiment
# (~70% of RAM), not an OOM kill. MANUAL, ADMIN-ONLY, the whole machine feels it (see common.ps1):
#   powershell -ExecutionPolicy Bypass -File tools\scenarios\windows\memory_pressure.ps1 -Bin build-msvc [-Short]
param(
    [Parameter(Mandatory = $true)][string]$Bin,
    [string]$Rules,
    [string]$Out,
    [switch]$Short,
    [switch]$KeepSnap,
    [int]$Percent = 70
)
. (Join-Path $PSScriptRoot 'common.ps1')
if ($Short) { $Percent = 30 }
$totalMb = [long]((Get-CimInstance Win32_ComputerSystem).TotalPhysicalMemory / 1048576)
$targetMb = [long]($totalMb * $Percent / 100)
$hold = 20
if ($Short) { $hold = 3 }
$stepMb = 64
$stepMs = 100
$growSeconds = [int]($targetMb / $stepMb * $stepMs / 1000) + 1

$trigger = {
    param($ctx)
    $o = Join-Path $ctx.Dir 'hog.out'
    $p = Start-Child $ctx $ctx.Load @('hog', "$stepMb", "$stepMs", "$targetMb") $o
    $ctx.Vars['hog_pid'] = $p.Id
    $ctx.Vars['hog_mb'] = $targetMb
    Start-Sleep -Seconds ($growSeconds + $hold)
    if ($p.HasExited) { throw "the hog exited early (exit $($p.ExitCode)): $(Get-Content -LiteralPath "$o.err" -Raw)" }
    Stop-Process -Id $p.Id -Force
    [void]$p.WaitForExit(30000)
}
$signature = {
    param($ctx)
    $pid0 = [int]$ctx.Vars['hog_pid']
    $exits = @(Get-Exits $ctx.Analyze $ctx.Rules $ctx.Filtered | Where-Object { [int]$_.pid -eq $pid0 })
    $memInfo = Get-Count $ctx.FilteredCounts $GuidKernelMemory @(1, 2)
    New-Check 'memory state (Kernel-Memory MemInfo/MemInfoEx, ids 1-2)' ($memInfo -gt 0) "$memInfo in the filtered trace"
    New-Check "the hog (pid $pid0) ended" ($exits.Count -gt 0) "$($exits.Count) exit(s) of that pid"
}
exit (Invoke-Scenario -Name memory_pressure -Bin $Bin -Rules $Rules -Out $Out -Short:$Short -KeepSnap:$KeepSnap `
        -TriggerSeconds ($growSeconds + $hold + 30) -Trigger $trigger -Signature $signature)
