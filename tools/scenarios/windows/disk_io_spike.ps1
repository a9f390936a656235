# disk_io_spike.ps1: large writes with a flush to disk every 32 MiB (hs_load write: FlushFileBuffers via
# _commit) in a temp folder, repeated for 30 s (-Short: once). MANUAL, ADMIN-ONLY (see common.ps1):
#   powershell -ExecutionPolicy Bypass -File tools\scenarios\windows\disk_io_spike.ps1 -Bin build-msvc [-Short] [-DiskDir D:\tmp]
param(
    [Parameter(Mandatory = $true)][string]$Bin,
    [string]$Rules,
    [string]$Out,
    [switch]$Short,
    [switch]$KeepSnap,
    [string]$DiskDir = $env:TEMP
)
. (Join-Path $PSScriptRoot 'common.ps1')
$secs = 30
if ($Short) { $secs = 0 }

$trigger = {
    param($ctx)
    $tmp = Join-Path $DiskDir ('hs_scen_disk.' + [guid]::NewGuid().ToString('N').Substring(0, 8))
    New-Item -ItemType Directory -Path $tmp | Out-Null
    [void]$ctx.TempDirs.Add($tmp)
    $start = Get-Date
    $n = 0
    do {
        $o = Join-Path $ctx.Dir "write$n.out"
        $p = Start-Child $ctx $ctx.Load @('write', $tmp, '512', '32') $o
        if ($n -eq 0) { $ctx.Vars['writer_pid'] = $p.Id }
        $code = Wait-Child $p 300
        if ($code -ne 0) { throw "the writer did not exit 0 (exit $code)" }
        $n++
    } while (((Get-Date) - $start).TotalSeconds -lt $secs)
    $ctx.Vars['writes'] = $n
}
$signature = {
    param($ctx)
    $pid0 = [int]$ctx.Vars['writer_pid']
    $exits = @(Get-Exits $ctx.Analyze $ctx.Rules $ctx.Filtered | Where-Object { [int]$_.pid -eq $pid0 })
    New-Check "the writer (pid $pid0) exited with 0" (($exits.Count -gt 0) -and ([long]$exits[0].code -eq 0)) "$($exits.Count) exit(s) of that pid"
    # The I/O itself: any Kernel-Disk or Kernel-File event in the key-event file. stutter.yaml has
    # Kernel-Disk in the ring only, so this is expected to report the gap (as on Linux).
    $io = 0
    foreach ($k in $ctx.FilteredCounts.Keys) {
        if ($k.StartsWith($GuidKernelDisk + '|') -or $k.StartsWith($GuidKernelFile + '|')) { $io += $ctx.FilteredCounts[$k] }
    }
    $ioFull = 0
    foreach ($k in $ctx.FullCounts.Keys) {
        if ($k.StartsWith($GuidKernelDisk + '|') -or $k.StartsWith($GuidKernelFile + '|')) { $ioFull += $ctx.FullCounts[$k] }
    }
    New-Check 'disk I/O or flush events (Kernel-Disk, Kernel-File)' ($io -gt 0) "$io in the filtered trace, $ioFull in the full one"
}
exit (Invoke-Scenario -Name disk_io_spike -Bin $Bin -Rules $Rules -Out $Out -Short:$Short -KeepSnap:$KeepSnap `
        -TriggerSeconds ($secs + 60) -Trigger $trigger -Signature $signature)
