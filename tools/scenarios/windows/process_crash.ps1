# process_crash.ps1: children that crash (hs_crash segv: a NULL store, access violation 0xC0000005) and abort
# (hs_crash abort: exit code 3), 6 rounds (-Short: 1). The crash dialog is off inside hs_crash (SetErrorMode),
# but Windows Error Reporting may still queue reports. MANUAL, ADMIN-ONLY (see common.ps1):
#   powershell -ExecutionPolicy Bypass -File tools\scenarios\windows\process_crash.ps1 -Bin build-msvc [-Short]
param(
    [Parameter(Mandatory = $true)][string]$Bin,
    [string]$Rules,
    [string]$Out,
    [switch]$Short,
    [switch]$KeepSnap
)
. (Join-Path $PSScriptRoot 'common.ps1')
$rounds = 6
if ($Short) { $rounds = 1 }

$trigger = {
    param($ctx)
    for ($r = 0; $r -lt $rounds; $r++) {
        $segv = Start-Child $ctx $ctx.Crash @('segv', '--delay-ms', '200') (Join-Path $ctx.Dir "segv$r.out")
        $abrt = Start-Child $ctx $ctx.Crash @('abort', '--delay-ms', '200') (Join-Path $ctx.Dir "abort$r.out")
        if ($r -eq 0) { $ctx.Vars['segv_pid'] = $segv.Id; $ctx.Vars['abort_pid'] = $abrt.Id }
        $c1 = Wait-Child $segv 30
        $c2 = Wait-Child $abrt 30
        if ([uint32]$c1 -ne 0xC0000005) { throw ("the segv child did not die of an access violation (exit 0x{0:X8})" -f [uint32]$c1) }
        if ($c2 -ne 3) { throw "the abort child did not exit 3 (exit $c2)" }
        if ($r + 1 -lt $rounds) { Start-Sleep -Seconds 4 }
    }
    $ctx.Vars['crash_rounds'] = $rounds
}
$signature = {
    param($ctx)
    $exits = @(Get-Exits $ctx.Analyze $ctx.Rules $ctx.Filtered)
    $segv = [int]$ctx.Vars['segv_pid']
    $abrt = [int]$ctx.Vars['abort_pid']
    $s = @($exits | Where-Object { [int]$_.pid -eq $segv })
    $a = @($exits | Where-Object { [int]$_.pid -eq $abrt })
    New-Check "the segv child (pid $segv) ended with 0xC0000005, flagged as a crash" (($s.Count -gt 0) -and ([uint32]$s[0].code -eq 0xC0000005) -and $s[0].crash) "$($s.Count) exit(s) of that pid"
    New-Check "the abort child (pid $abrt) ended with exit code 3" (($a.Count -gt 0) -and ([long]$a[0].code -eq 3)) "$($a.Count) exit(s) of that pid"
}
exit (Invoke-Scenario -Name process_crash -Bin $Bin -Rules $Rules -Out $Out -Short:$Short -KeepSnap:$KeepSnap `
        -TriggerSeconds ($rounds * 5 + 30) -Trigger $trigger -Signature $signature)
