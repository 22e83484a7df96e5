<#
.SYNOPSIS
  Install or update the NVIDIA driver on Windows, or say exactly where to get it.

.DESCRIPTION
  NVIDIA's driver itself is not in the official winget repository (winget-pkgs blocks packages whose installer
  needs the hardware: microsoft/winget-pkgs#283373, microsoft/winget-cli#5650). So this script:
    1. reads the GPU and the installed driver version (Win32_VideoController);
    2. when -MinVersion is given and already met, does nothing;
    3. when winget is present and knows the NVIDIA App (which installs and updates the driver), installs it;
    4. otherwise prints the exact download page and the version to choose.
  -DryRun prints every action and changes nothing. Running it twice is safe.
  WSL users: this Windows driver is also the driver WSL uses; never install a Linux driver inside WSL.

.EXAMPLE
  powershell -NoProfile -ExecutionPolicy Bypass -File nvidia-driver.ps1 -Branch 580 -MinVersion 580.65.06 -DryRun
#>
[CmdletBinding()]
param(
    [string]$Branch = "",
    [string]$MinVersion = "",
    [switch]$DryRun
)
Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

$DownloadPage = 'https://www.nvidia.com/Download/index.aspx'
$WingetId = 'Nvidia.NVIDIAApp'

function Invoke-Step([string]$Exe, [string[]]$Arguments) {
    Write-Output ("+ " + $Exe + " " + ($Arguments -join ' '))
    if (-not $DryRun) {
        & $Exe @Arguments
        if ($LASTEXITCODE -ne 0) { throw "$Exe failed with exit code $LASTEXITCODE" }
    }
}

# Windows reports the driver as 32.0.15.8065 -> NVIDIA version 580.65 (last 5 digits).
function Get-NvidiaVersion([string]$WindowsVersion) {
    $digits = ($WindowsVersion -replace '\.', '')
    if ($digits.Length -lt 5) { return $null }
    $last = $digits.Substring($digits.Length - 5)
    return "{0}.{1}" -f [int]$last.Substring(0, 3), $last.Substring(3)
}

$gpus = @(Get-CimInstance Win32_VideoController | Where-Object { $_.Name -like '*NVIDIA*' })
if ($gpus.Count -eq 0) {
    Write-Output "# No NVIDIA GPU is visible to Windows. Check that it is seated and enabled in Device Manager."
    exit 2
}
foreach ($g in $gpus) {
    $nv = Get-NvidiaVersion $g.DriverVersion
    Write-Output ("# GPU: {0}, driver {1} (Windows version {2})" -f $g.Name, $nv, $g.DriverVersion)
    if ($MinVersion -and $nv -and ([version]$nv -ge [version]($MinVersion -replace '^(\d+\.\d+).*', '$1'))) {
        Write-Output "# The driver already meets $MinVersion; nothing to do."
        exit 0
    }
}

$want = if ($MinVersion) { "version $MinVersion or newer" } elseif ($Branch) { "branch $Branch or newer" } else { "the newest driver" }
$winget = Get-Command winget -ErrorAction SilentlyContinue
if ($winget) {
    $found = & winget show --id $WingetId --exact --accept-source-agreements 2>$null
    if ($LASTEXITCODE -eq 0 -and $found) {
        Invoke-Step 'winget' @('install', '--id', $WingetId, '--exact', '--accept-package-agreements', '--accept-source-agreements')
        Write-Output "# Open the NVIDIA App, go to Drivers and install $want, then restart Windows."
        Write-Output "gpusetup: reboot-needed"
        exit 0
    }
    Write-Output "# winget is here but has no NVIDIA driver package (the official repository cannot carry it)."
}
Write-Output "# Download $want for '$($gpus[0].Name)' from:"
Write-Output "#   $DownloadPage"
Write-Output "# Choose your GPU, Windows 10/11 64-bit, and the Studio or Game Ready driver; run it, then restart Windows."
if ($Branch -and [int]$Branch -le 470) {
    Write-Output "# Your GPU needs the legacy $Branch branch: pick 'R$Branch' in the driver search, not the newest driver."
}
Write-Output "# After the restart run: gpusetup install --resume"
exit 4
