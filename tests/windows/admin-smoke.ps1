# admin-smoke.ps1: the Windows backend's end-to-end check, run by hand in an elevated PowerShell (it starts real
# kernel trace sessions, runs child processes and writes traces under -WorkDir). CI cannot run it: there is no
# Windows machine there, and Wine only stubs ETW.
#
#   powershell -ExecutionPolicy Bypass -File tests\windows\admin-smoke.ps1 -Bin build-msvc\engine\Release
#
# -Bin: the folder with engine.exe and analyze.exe (tools\analyze\analyze.exe is looked up next to it too).
# Exit code 0 when every check passed; each check prints PASS or FAIL with what it saw.
param(
    [Parameter(Mandatory = $true)][string]$Bin,
    [string]$Rules = (Join-Path $PSScriptRoot '..\..\rules'),
    [string]$WorkDir = (Join-Path $env:TEMP ('hindsight-smoke-' + (Get-Date -Format 'yyyyMMdd_HHmmss'))),
    [int]$Seconds = 15
)
$ErrorActionPreference = 'Stop'
$failed = 0
function Check([bool]$ok, [string]$what) {
    if ($ok) { Write-Host "PASS  $what" } else { Write-Host "FAIL  $what" -ForegroundColor Red; $script:failed++ }
}
function Find-Exe([string]$name) {
    foreach ($p in @((Join-Path $Bin $name), (Join-Path $Bin "..\..\tools\analyze\Release\$name"),
                     (Join-Path $Bin "..\..\tools\analyze\$name"), (Join-Path $Bin "..\tools\analyze\$name"))) {
        if (Test-Path $p) { return (Resolve-Path $p).Path }
    }
    throw "cannot find $name under $Bin"
}

$principal = New-Object Security.Principal.WindowsPrincipal([Security.Principal.WindowsIdentity]::GetCurrent())
if (-not $principal.IsInRole([Security.Principal.WindowsBuiltInRole]::Administrator)) {
    Write-Host 'Run this from an elevated PowerShell ("Run as administrator").' -ForegroundColor Red
    exit 4
}
$engine = Find-Exe 'engine.exe'
$analyze = Find-Exe 'analyze.exe'
$Rules = (Resolve-Path $Rules).Path
New-Item -ItemType Directory -Force -Path $WorkDir | Out-Null
Push-Location $WorkDir
try {
    # 1. Recording mode: both sessions, a child process that exits with 3 while they run, then the timed stop
    #    (the same path as Ctrl+C: capture state, FLUSH of the ring to snap.etl, STOP).
    $log = Join-Path $WorkDir 'engine-record.txt'
    $p = Start-Process -FilePath $engine -ArgumentList @('--rules', (Join-Path $Rules 'stutter.yaml'), '--duration-sec', "$Seconds") `
        -RedirectStandardOutput $log -RedirectStandardError "$log.err" -PassThru -NoNewWindow
    Start-Sleep -Seconds 5
    $child = Start-Process -FilePath "$env:SystemRoot\System32\cmd.exe" -ArgumentList '/c', 'exit 3' -PassThru -Wait -NoNewWindow
    $p.WaitForExit()
    Check ($p.ExitCode -eq 0) "engine --rules stutter.yaml exits 0 (got $($p.ExitCode); log $log)"
    $run = Get-ChildItem -Directory (Join-Path $WorkDir 'logs\runs') | Sort-Object Name | Select-Object -Last 1
    Check ($null -ne $run) "a run folder under logs\runs"
    foreach ($f in 'main.log', 'keyevents.etl', 'snap.etl', 'run.json') {
        $path = Join-Path $run.FullName $f
        Check ((Test-Path $path) -and (Get-Item $path).Length -gt 0) "$f exists and is not empty"
    }
    $snap = Join-Path $run.FullName 'snap.etl'
    $keys = Join-Path $run.FullName 'keyevents.etl'
    & tracerpt.exe $snap -o (Join-Path $WorkDir 'snap.xml') -of XML -y | Out-Null
    Check ($LASTEXITCODE -eq 0) "tracerpt accepts snap.etl"
    & tracerpt.exe $keys -o (Join-Path $WorkDir 'keys.xml') -of XML -y | Out-Null
    Check ($LASTEXITCODE -eq 0) "tracerpt accepts keyevents.etl"
    $counts = & $analyze counts $keys
    Check ($LASTEXITCODE -eq 0) "analyze counts keyevents.etl"
    # Microsoft-Windows-Kernel-Process: ProcessStart (id 1) and ProcessStop (id 2) of the child.
    Check ([bool]($counts | Select-String -Pattern '^22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716\tid=1\t')) "keyevents.etl has Kernel-Process ProcessStart"
    Check ([bool]($counts | Select-String -Pattern '^22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716\tid=2\t')) "keyevents.etl has Kernel-Process ProcessStop"
    $crash = & $analyze crash $keys
    Check ([bool]($crash | Select-String -SimpleMatch "$($child.Id)")) "analyze crash lists the child (pid $($child.Id))"
    $left = & logman.exe query -ets | Select-String -Pattern 'Hindsight'
    Check ($null -eq $left) "no Hindsight session left running (logman query -ets)"

    # 2. A second engine while a stale session of the same name runs: it is replaced, with a message.
    & logman.exe start HindsightStutterRing -ets -bs 64 -nb 4 4 -mode 0x400 | Out-Null
    $log2 = Join-Path $WorkDir 'engine-stale.txt'
    $p = Start-Process -FilePath $engine -ArgumentList @('--rules', (Join-Path $Rules 'stutter.yaml'), '--duration-sec', '3') `
        -RedirectStandardOutput $log2 -RedirectStandardError "$log2.err" -PassThru -NoNewWindow -Wait
    Check ($p.ExitCode -eq 0) "engine replaces a stale session and exits 0"
    Check ([bool](Select-String -Path $log2 -SimpleMatch 'is still running')) "engine says it stopped the stale session"

    # 3. Launch mode: a CPU-bound child under the sampler, a merged .etl with samples.
    $out = Join-Path $WorkDir 'cpu-sample.etl'
    $launch = & $engine --rules (Join-Path $Rules 'cpu-sample.yaml') --launch "$env:SystemRoot\System32\cmd.exe" `
        --args '/c "for /l %i in (1,1,300000) do @rem"' --out $out --timeout-sec 120
    $launch | ForEach-Object { Write-Host "      $_" }
    Check ($LASTEXITCODE -eq 0) "engine --launch exits 0"
    Check ([bool]($launch | Select-String -Pattern '^DONE .* OK')) "launch prints DONE ... OK"
    Check ((Test-Path $out) -and (Get-Item $out).Length -gt 0) "cpu-sample.etl written"
    & tracerpt.exe $out -o (Join-Path $WorkDir 'cpu.xml') -of XML -y | Out-Null
    Check ($LASTEXITCODE -eq 0) "tracerpt accepts cpu-sample.etl"
    $cpu = & $analyze cpu $out
    Check ($LASTEXITCODE -eq 0 -and [bool]($cpu | Select-String -SimpleMatch 'cmd.exe')) "analyze cpu shows cmd.exe"
} finally {
    Pop-Location
}
if ($failed) { Write-Host "$failed check(s) failed; files in $WorkDir" -ForegroundColor Red; exit 1 }
Write-Host "all checks passed; files in $WorkDir"
exit 0
