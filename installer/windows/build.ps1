# Build the Windows installer. NOT RUN ON THE LINUX CI: run on Windows 10/11 x64 with
# Python 3.11+ (python.org build) and Inno Setup 6 (iscc.exe on PATH, or INNO_SETUP_ISCC).
#
#   powershell -ExecutionPolicy Bypass -File installer\windows\build.ps1
#
# Output: build\installer\persona-desktop-<version>-setup.exe
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..\..")

if (-not (Test-Path .venv\Scripts\python.exe)) { python -m venv .venv }
.venv\Scripts\python -m pip install -q --upgrade pip
.venv\Scripts\python -m pip install -q -e ".[package]"
$version = .venv\Scripts\python -c "from importlib.metadata import version; print(version('persona-desktop'))"

# Icons: PNG sizes + persona-desktop.ico from persona_desktop\resources\icons\persona-desktop.svg
.venv\Scripts\python packaging\render_icons.py build\icons\hicolor --ico build\icons\persona-desktop.ico
if ($LASTEXITCODE -ne 0) { throw "render_icons failed" }

# One-folder bundle: build\dist\persona-desktop\{persona-desktop.exe, persona-desktop-cli.exe, _internal\}
.venv\Scripts\pyinstaller --noconfirm --clean --distpath build\dist --workpath build\pyinstaller packaging\persona-desktop.spec
if ($LASTEXITCODE -ne 0) { throw "PyInstaller failed" }

# Smoke test of the bundle before packing it (the same check the Linux CI runs).
$env:QT_QPA_PLATFORM = "offscreen"
build\dist\persona-desktop\persona-desktop-cli.exe --version
build\dist\persona-desktop\persona-desktop-cli.exe --bundle-check
if ($LASTEXITCODE -ne 0) { throw "bundle check failed" }
Remove-Item Env:QT_QPA_PLATFORM

$iscc = if ($env:INNO_SETUP_ISCC) { $env:INNO_SETUP_ISCC } else { "iscc" }
& $iscc "/DAppVersion=$version" installer\windows\persona-desktop.iss
if ($LASTEXITCODE -ne 0) { throw "Inno Setup failed" }
Get-ChildItem build\installer\*.exe
