# network_disconnect.ps1: a TCP download runs while the network adapter -Adapter is disabled for 5 s
# (-Short: 3 s) and enabled again (Disable-NetAdapter / Enable-NetAdapter). MANUAL, ADMIN-ONLY and it
# cuts the machine off the network: run it on a test machine, from its console, never over a remote
# session that uses that adapter. The adapter is enabled again on every path (finally), Ctrl+C included.
#   powershell -ExecutionPolicy Bypass -File tools\scenarios\windows\network_disconnect.ps1 -Bin build-msvc `
#       -Adapter Ethernet -Url http://a-host-on-that-network/some-large-file [-Short]
param(
    [Parameter(Mandatory = $true)][string]$Bin,
    [Parameter(Mandatory = $true)][string]$Adapter,
    [Parameter(Mandatory = $true)][string]$Url,
    [string]$Rules,
    [string]$Out,
    [switch]$Short,
    [switch]$KeepSnap
)
. (Join-Path $PSScriptRoot 'common.ps1')
$down = 5; $before = 10; $after = 15
if ($Short) { $down = 3; $before = 2; $after = 5 }
$nic = Get-NetAdapter -Name $Adapter -ErrorAction Stop   # fails early on a wrong name
if ($nic.Status -ne 'Up') { throw "adapter $Adapter is $($nic.Status), not Up" }

$trigger = {
    param($ctx)
    # The transfer: a download in a background job, restarted when the outage breaks it.
    $dl = Join-Path $ctx.Dir 'download.bin'
    $job = Start-Job -ArgumentList $Url, $dl, ($before + $down + $after) -ScriptBlock {
        param($u, $file, $secs)
        $end = (Get-Date).AddSeconds($secs)
        $errors = 0
        while ((Get-Date) -lt $end) {
            try { Invoke-WebRequest -Uri $u -OutFile $file -UseBasicParsing -TimeoutSec 10 | Out-Null }
            catch { $errors++; Start-Sleep -Milliseconds 500 }
        }
        $errors
    }
    $ctx.Vars['job_id'] = $job.Id
    $ctx.Vars['adapter'] = $Adapter
    Start-Sleep -Seconds $before
    Disable-NetAdapter -Name $Adapter -Confirm:$false
    $ctx.Vars['disabled'] = 1
    Write-Host "[network_disconnect] adapter $Adapter disabled"
    Start-Sleep -Seconds $down
    Enable-NetAdapter -Name $Adapter -Confirm:$false
    $ctx.Vars['disabled'] = 0
    Write-Host "[network_disconnect] adapter $Adapter enabled"
    Start-Sleep -Seconds $after
    $errors = Receive-Job -Job $job -Wait
    Remove-Job -Job $job -Force
    $ctx.Vars['download_errors'] = $errors
}
$cleanup = {
    param($ctx)
    # Whatever happened: the adapter ends enabled, the download job ends.
    Enable-NetAdapter -Name $Adapter -Confirm:$false -ErrorAction SilentlyContinue
    if ($ctx.Vars.ContainsKey('job_id')) { Remove-Job -Id $ctx.Vars['job_id'] -Force -ErrorAction SilentlyContinue }
}
$signature = {
    param($ctx)
    # Ids from the original tool's whitelist notes (names guessed): Kernel-PnP 813-815 fired on every NIC
    # disconnect; TCPIP 1433-1438 are the interface rundown, 1486 TcpipStatusIndication; 1039 is an abort
    # (RST), 1468/1479 retransmit and timeout.
    $link = (Get-Count $ctx.FilteredCounts $GuidKernelPnP @(813, 814, 815)) + (Get-Count $ctx.FilteredCounts $GuidTcpip @(1433, 1434, 1435, 1436, 1437, 1438, 1486))
    $linkFull = (Get-Count $ctx.FullCounts $GuidKernelPnP @(813, 814, 815)) + (Get-Count $ctx.FullCounts $GuidTcpip @(1433, 1434, 1435, 1436, 1437, 1438, 1486))
    $tcp = Get-Count $ctx.FilteredCounts $GuidTcpip @(1039, 1468, 1479)
    $tcpFull = Get-Count $ctx.FullCounts $GuidTcpip @(1039, 1468, 1479)
    New-Check 'the adapter going down and up (Kernel-PnP 813-815, TCPIP 1433-1438/1486)' ($link -gt 0) "$link in the filtered trace, $linkFull in the full one"
    New-Check 'TCP aborts, retransmits or timeouts (TCPIP 1039/1468/1479)' ($tcp -gt 0) "$tcp in the filtered trace, $tcpFull in the full one"
}
exit (Invoke-Scenario -Name network_disconnect -Bin $Bin -Rules $Rules -Out $Out -Short:$Short -KeepSnap:$KeepSnap `
        -TriggerSeconds ($before + $down + $after + 30) -Trigger $trigger -Signature $signature -Cleanup $cleanup)
