# run-all.ps1: the six Windows fault scenarios one after the other, then a summary. MANUAL, ADMIN-ONLY and
# side-effectful (CPU, memory, disk, and network_disconnect disables -Adapter for seconds): see common.ps1.
#   powershell -ExecutionPolicy Bypass -File tools\scenarios\windows\run-all.ps1 -Bin build-msvc `
#       -Adapter Ethernet -Url http://a-host-on-that-network/some-large-file [-Short] [-Out DIR]
param(
    [Parameter(Mandatory = $true)][string]$Bin,
    [Parameter(Mandatory = $true)][string]$Adapter,
    [Parameter(Mandatory = $true)][string]$Url,
    [string]$Rules,
    [string]$Out,
    [switch]$Short
)
$ErrorActionPreference = 'Stop'
$worst = 0
$summary = @()
foreach ($s in @('baseline', 'cpu_saturation', 'memory_pressure', 'disk_io_spike', 'network_disconnect', 'process_crash')) {
    $a = @{ Bin = $Bin; Short = [bool]$Short }
    if ($Rules) { $a['Rules'] = $Rules }
    if ($Out) { $a['Out'] = $Out }
    if ($s -eq 'network_disconnect') { $a['Adapter'] = $Adapter; $a['Url'] = $Url }
    $t = Get-Date
    # In this process: each script's `exit N` ends that script only and sets $LASTEXITCODE.
    $global:LASTEXITCODE = 3
    try { & (Join-Path $PSScriptRoot "$s.ps1") @a } catch { Write-Host "[$s] FAIL: $_" -ForegroundColor Red }
    $rc = $LASTEXITCODE
    $summary += ('{0,-20} exit {1}  {2,6:N1} s' -f $s, $rc, ((Get-Date) - $t).TotalSeconds)
    if ($rc -gt $worst) { $worst = $rc }
}
Write-Host '== scenarios (exit 0 pass, 1 coverage bug in the rules, 3 scenario error, 4 not admin)'
$summary | ForEach-Object { Write-Host $_ }
exit $worst
