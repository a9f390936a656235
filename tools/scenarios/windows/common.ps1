# common.ps1: what the Windows fault scenarios share (dot-sourced by each <scenario>.ps1): tools, the two
# captures side by side (the profile as it is = "filtered", its whitelist-free twin from hs_fullprofile =
# "full"), the .counts files, the signature report and the cleanup.
#
# MANUAL, ADMIN-ONLY, SIDE-EFFECTFUL: these scripts start real ETW sessions, burn CPU, eat memory, write
# gigabytes and (network_disconnect) disable a network adapter. Run them by hand from an elevated
# PowerShell on a test machine, never in CI. They were written without a Windows machine to run them on
# (the project's CI has none); docs/scenarios.md says what was and was not verified.
#
# PowerShell 5.1 compatible (Windows' own): no ternaries, no && or ||, no null-coalescing.

Set-StrictMode -Version 2
$ErrorActionPreference = 'Stop'

# GUIDs of the catalog providers the signatures look at (rules/providers/windows.yaml), lower case as
# `analyze counts` prints them.
$script:GuidKernelProcess = '22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716'
$script:GuidKernelMemory = 'd1d93ef7-e1f2-4f45-9943-03d245fe6c00'
$script:GuidKernelPnP = '9c205a39-1250-487d-abd7-e831c6290539'
$script:GuidTcpip = '2f07e2ee-15db-40f1-90ef-9d7ba282188a'
$script:GuidKernelDisk = 'c7bde69a-e1e0-4177-b6ef-283ad1525271'
$script:GuidKernelFile = 'edd08927-9cc4-4e65-b970-c2560fb5c289'

function Find-Tool([string]$Bin, [string]$Name) {
    $dirs = @('', 'engine', 'tools\scenarios', 'tools\analyze', 'tools\rulecheck')
    foreach ($d in $dirs) {
        foreach ($cfg in @('', 'Release', 'RelWithDebInfo', 'Debug')) {
            $p = Join-Path (Join-Path (Join-Path $Bin $d) $cfg) $Name
            if (Test-Path -LiteralPath $p) { return (Resolve-Path -LiteralPath $p).Path }
        }
    }
    throw "cannot find $Name under $Bin (give -Bin the build folder, e.g. build-msvc or build-win)"
}

function Test-Admin {
    $principal = New-Object Security.Principal.WindowsPrincipal([Security.Principal.WindowsIdentity]::GetCurrent())
    return $principal.IsInRole([Security.Principal.WindowsBuiltInRole]::Administrator)
}

# Writes text with LF line ends and no BOM (the .counts format; PowerShell 5.1's utf8 adds a BOM).
function Write-TextFile([string]$Path, [string[]]$Lines) {
    $enc = New-Object System.Text.UTF8Encoding($false)
    [System.IO.File]::WriteAllText($Path, (($Lines -join "`n") + "`n"), $enc)
}

# `analyze counts` of an .etl as a hashtable "guid|id=N" -> count.
function Get-Counts([string]$Analyze, [string]$Etl) {
    $h = @{}
    foreach ($line in (& $Analyze counts $Etl)) {
        $f = $line -split "`t"
        if ($f.Count -eq 3) { $h[($f[0] + '|' + $f[1])] = [long]$f[2] }
    }
    return $h
}

function Get-Count([hashtable]$Counts, [string]$Guid, [int[]]$Ids) {
    $n = 0
    foreach ($id in $Ids) {
        $k = $Guid + '|id=' + $id
        if ($Counts.ContainsKey($k)) { $n += $Counts[$k] }
    }
    return $n
}

# Process exits that `analyze crash --json` found in an .etl: objects with pid, image, code, crash.
function Get-Exits([string]$Analyze, [string]$Rules, [string]$Etl) {
    $json = (& $Analyze crash $Etl --rules $Rules --json) -join "`n"
    $doc = $json | ConvertFrom-Json
    $exits = @()
    foreach ($e in $doc.timeline) {
        if ($e.PSObject.Properties.Name -contains 'exit' -and $null -ne $e.exit) { $exits += $e.exit }
    }
    return $exits
}

# One signature requirement's result.
function New-Check([string]$What, [bool]$Ok, [string]$Detail) {
    return New-Object PSObject -Property @{ What = $What; Ok = $Ok; Detail = $Detail }
}

# Runs one scenario: warmup, trigger, settle with both captures recording, then counts and signature.
#   -Trigger    { param($ctx) ... }  starts the load; records pids in $ctx.Vars; adds processes to $ctx.Children
#   -Signature  { param($ctx) ... }  returns New-Check results, checked against $ctx.Filtered (and $ctx.Full)
#   -Cleanup    { param($ctx) ... }  undoes the trigger's side effects (runs on every path, Ctrl+C included)
#   -TriggerSeconds  the longest the trigger may take; the captures run warmup + this + settle (+5 s)
# Exit codes as run-linux.sh: 0 pass, 1 coverage bug in the rules, 3 scenario error, 4 not admin / in use.
function Invoke-Scenario {
    param(
        [Parameter(Mandatory = $true)][string]$Name,
        [Parameter(Mandatory = $true)][string]$Bin,
        [string]$Rules,
        [string]$Out,
        [switch]$Short,
        [switch]$KeepSnap,
        [Parameter(Mandatory = $true)][int]$TriggerSeconds,
        [Parameter(Mandatory = $true)][scriptblock]$Trigger,
        [Parameter(Mandatory = $true)][scriptblock]$Signature,
        [scriptblock]$Cleanup
    )
    if (-not (Test-Admin)) {
        Write-Host "[$Name] FAIL: run this from an elevated PowerShell (Run as administrator)" -ForegroundColor Red
        return 4
    }
    $src = (Resolve-Path (Join-Path $PSScriptRoot '..\..\..')).Path
    if (-not $Rules) { $Rules = Join-Path $src 'rules\stutter.yaml' }
    if (-not $Out) { $Out = Join-Path (Get-Location).Path 'scenarios-out' }
    $Rules = (Resolve-Path $Rules).Path
    $ctx = @{
        Name = $Name; Short = [bool]$Short; Rules = $Rules
        Engine = (Find-Tool $Bin 'engine.exe'); Analyze = (Find-Tool $Bin 'analyze.exe')
        Rulecheck = (Find-Tool $Bin 'rulecheck.exe'); FullProfileTool = (Find-Tool $Bin 'hs_fullprofile.exe')
        Crash = (Find-Tool $Bin 'hs_crash.exe'); Load = (Find-Tool $Bin 'hs_load.exe')
        Dir = (Join-Path $Out $Name); Vars = @{}; Children = New-Object System.Collections.ArrayList
        TempDirs = New-Object System.Collections.ArrayList
        Warmup = 10; Settle = 10
    }
    if ($Short) { $ctx.Warmup = 2; $ctx.Settle = 2 }
    $dir = $ctx.Dir
    if (Test-Path -LiteralPath $dir) { Remove-Item -LiteralPath $dir -Recurse -Force }
    New-Item -ItemType Directory -Force -Path (Join-Path $dir 'run') | Out-Null
    $log = Join-Path $dir 'scenario.log'
    function Say([string]$m) { $line = "[$Name] $m"; Write-Host $line; Add-Content -LiteralPath $log -Value $line }

    $engines = @{}
    $loggers = @()
    $rc = 3
    $t0 = Get-Date
    try {
        # The full profile: same sessions, logger names + "_full", no whitelists, keywords all.
        $fullProfile = Join-Path $dir 'full-profile.yaml'
        # Anything a program or a script block prints goes to the host, not into this function's result.
        & $ctx.FullProfileTool $Rules --platform windows --file-mb 4096 -o $fullProfile | Out-Host
        if ($LASTEXITCODE -ne 0) { Say "FAIL: hs_fullprofile could not derive the full profile"; return 3 }
        & $ctx.Rulecheck --strict --quiet $fullProfile | Out-Host
        if ($LASTEXITCODE -ne 0) { Say "FAIL: the full profile fails rulecheck --strict"; return 3 }
        foreach ($m in (Select-String -LiteralPath $fullProfile -Pattern '^\s*logger_name: "(.*)_full"$')) {
            $loggers += $m.Matches[0].Groups[1].Value
        }
        if ($loggers.Count -eq 0) { Say "FAIL: no windows sessions in $fullProfile"; return 3 }
        # The filtered capture uses the profile's own session names: never take them from a running recorder.
        $running = (& logman.exe query -ets) -join "`n"
        foreach ($l in $loggers) {
            foreach ($n in @($l, ($l + '_full'))) {
                if ($running -match ('(?m)^' + [regex]::Escape($n) + '\s')) {
                    Say "FAIL: ETW session $n is running (a hindsight engine recording?): stop it first"
                    $loggers = @()   # not ours: the cleanup must not stop them
                    return 4
                }
            }
        }

        $duration = $ctx.Warmup + $TriggerSeconds + $ctx.Settle + 5
        Say "scenario $Name ($(if ($Short) { 'short' } else { 'long' })): captures of $duration s; profile $Rules; out $dir"
        foreach ($kind in @('filtered', 'full')) {
            $p = $Rules
            if ($kind -eq 'full') { $p = $fullProfile }
            $o = Join-Path $dir "$kind.engine.out"
            $engines[$kind] = Start-Process -FilePath $ctx.Engine -WorkingDirectory (Join-Path $dir 'run') `
                -ArgumentList @('--rules', ('"' + $p + '"'), '--duration-sec', "$duration") `
                -RedirectStandardOutput $o -RedirectStandardError "$o.err" -PassThru -NoNewWindow
            $null = $engines[$kind].Handle   # keeps the handle, so ExitCode is known after the exit
        }
        $deadline = (Get-Date).AddSeconds(90)
        $recording = @{}
        while ($recording.Count -lt 2) {
            foreach ($kind in @('filtered', 'full')) {
                $o = Join-Path $dir "$kind.engine.out"
                if (-not $recording.ContainsKey($kind) -and (Test-Path $o) -and (Select-String -LiteralPath $o -Pattern '^engine: recording' -Quiet)) {
                    $recording[$kind] = Get-Date
                }
                if ($engines[$kind].HasExited -and -not $recording.ContainsKey($kind)) {
                    Say "FAIL: the $kind engine exited early (exit $($engines[$kind].ExitCode)); see $o"
                    return 3
                }
            }
            if ((Get-Date) -gt $deadline) { Say 'FAIL: the engines did not start recording within 90 s'; return 3 }
            Start-Sleep -Milliseconds 100
        }
        Say "both captures recording; warmup $($ctx.Warmup) s"
        Start-Sleep -Seconds $ctx.Warmup
        $tTrigger = Get-Date
        & $Trigger $ctx | Out-Host
        Say ("trigger done in {0:N1} s; settle $($ctx.Settle) s" -f ((Get-Date) - $tTrigger).TotalSeconds)
        Start-Sleep -Seconds $ctx.Settle
        foreach ($kind in @('filtered', 'full')) {
            if (-not $engines[$kind].WaitForExit(($duration + 120) * 1000)) { Say "FAIL: the $kind engine did not stop"; return 3 }
            if ($engines[$kind].ExitCode -ne 0) { Say "FAIL: the $kind engine exited $($engines[$kind].ExitCode)"; return 3 }
        }
        $engines = @{}

        # Collect: run folders, traces, counts.
        $vars = @()
        foreach ($k in $ctx.Vars.Keys) { $vars += "$k=$($ctx.Vars[$k])" }
        Write-TextFile (Join-Path $dir 'vars.env') $vars
        foreach ($kind in @('filtered', 'full')) {
            $o = Join-Path $dir "$kind.engine.out"
            $m = Select-String -LiteralPath $o -Pattern '^engine: run folder (.*) \(pid' | Select-Object -First 1
            if (-not $m) { Say "FAIL: no run folder in the $kind engine's output"; return 3 }
            $run = Join-Path (Join-Path $dir 'run') $m.Matches[0].Groups[1].Value
            Move-Item -LiteralPath $run -Destination (Join-Path $dir $kind)
            Move-Item -LiteralPath $o -Destination (Join-Path $dir "$kind\engine.out")
            $etl = 'keyevents.etl'; $snap = 'snap.etl'
            if ($kind -eq 'full') { $etl = 'full-keyevents.etl'; $snap = 'full-snap.etl' }
            Move-Item -LiteralPath (Join-Path $dir "$kind\$etl") -Destination (Join-Path $dir "$kind.etl")
            if (-not $KeepSnap) { Remove-Item -LiteralPath (Join-Path $dir "$kind\$snap") -ErrorAction SilentlyContinue }
            $stats = Select-String -LiteralPath (Join-Path $dir "$kind\engine.out") -Pattern '^engine: stats:' | Select-Object -Last 1
            $hdr = @('# hindsight scenario counts, format 1', "# scenario: $Name", "# capture: $kind",
                "# seconds: $duration", "# mode: $(if ($Short) { 'short' } else { 'long' })",
                "# profile: $(if ($kind -eq 'full') { "$fullProfile (from $Rules)" } else { $Rules })",
                "# trace: $kind.etl", "# host: windows $([Environment]::OSVersion.Version), $([Environment]::ProcessorCount) CPUs")
            if ($stats) { $hdr += "# engine_stats: $($stats.Line -replace '^engine: stats: ', '')" }
            $counts = & $ctx.Analyze counts (Join-Path $dir "$kind.etl")
            Write-TextFile (Join-Path $dir "$kind.counts") ($hdr + $counts)
            Say "$kind`: $(($counts | Select-Object -Last 1) -replace '^TOTAL\t', '') events"
        }
        $ctx.Filtered = Join-Path $dir 'filtered.etl'
        $ctx.Full = Join-Path $dir 'full.etl'
        $ctx.FilteredCounts = Get-Counts $ctx.Analyze $ctx.Filtered
        $ctx.FullCounts = Get-Counts $ctx.Analyze $ctx.Full

        # The signature, in the filtered trace.
        $missing = 0
        foreach ($c in @(& $Signature $ctx)) {
            if ($c.Ok) { Say "  ok    $($c.What): $($c.Detail)" }
            else { Say "  FAIL  $($c.What): coverage bug in the rules: the filtered trace lacks it ($($c.Detail))"; $missing++ }
        }
        if ($missing -gt 0) { Say "signature of $Name`: FAILED: coverage bug in the rules: $missing requirement(s) missing"; $rc = 1 }
        else { Say "signature of $Name`: OK"; $rc = 0 }
        return $rc
    }
    catch {
        # A trigger that threw (the scenario did not happen as planned) or a tool that failed.
        Say "FAIL: $($_.Exception.Message)"
        return 3
    }
    finally {
        foreach ($p in $ctx.Children) {
            if ($null -ne $p -and -not $p.HasExited) { Stop-Process -Id $p.Id -Force -ErrorAction SilentlyContinue }
        }
        if ($Cleanup) { & $Cleanup $ctx | Out-Host }
        # Engines still running (failure, Ctrl+C): killing them leaves their ETW sessions running, so stop those.
        foreach ($kind in @($engines.Keys)) {
            $e = $engines[$kind]
            if ($null -ne $e -and -not $e.HasExited) {
                Stop-Process -Id $e.Id -Force -ErrorAction SilentlyContinue
                foreach ($l in $loggers) {
                    $n = $l
                    if ($kind -eq 'full') { $n = $l + '_full' }
                    try { & logman.exe stop $n -ets 2>&1 | Out-Null } catch { Write-Host "logman stop $n failed: $_" }
                }
            }
        }
        foreach ($t in $ctx.TempDirs) { Remove-Item -LiteralPath $t -Recurse -Force -ErrorAction SilentlyContinue }
        Say ("scenario $Name finished in {0:N1} s" -f ((Get-Date) - $t0).TotalSeconds)
    }
}

# Starts one of the project's programs without a window; returns the process (added to $ctx.Children).
function Start-Child($ctx, [string]$Exe, [string[]]$ArgList, [string]$OutFile) {
    $quoted = @()
    foreach ($a in $ArgList) { if ($a -match '\s') { $quoted += '"' + $a + '"' } else { $quoted += $a } }
    $p = Start-Process -FilePath $Exe -ArgumentList $quoted -PassThru -NoNewWindow `
        -RedirectStandardOutput $OutFile -RedirectStandardError "$OutFile.err"
    $null = $p.Handle   # keeps the handle, so ExitCode is known after the exit
    [void]$ctx.Children.Add($p)
    return $p
}

# Waits for a child; returns its exit code, or $null on timeout.
function Wait-Child($p, [int]$Seconds) {
    if (-not $p.WaitForExit($Seconds * 1000)) { return $null }
    return $p.ExitCode
}

# The first "pid N" a program printed (hs_crash and hs_load print "...: pid N: MODE" first).
function Get-PrintedPid([string]$OutFile) {
    for ($i = 0; $i -lt 100; $i++) {
        if (Test-Path -LiteralPath $OutFile) {
            $m = Select-String -LiteralPath $OutFile -Pattern 'pid (\d+)' | Select-Object -First 1
            if ($m) { return [int]$m.Matches[0].Groups[1].Value }
        }
        Start-Sleep -Milliseconds 100
    }
    return $null
}
