; Inno Setup 6 script for Persona Desktop on Windows (x64).
; NOT BUILT ON THE LINUX CI: written to build on Windows with installer\windows\build.ps1,
; which first makes the PyInstaller bundle in build\dist\persona-desktop, then runs:
;   iscc /DAppVersion=0.1.0 installer\windows\persona-desktop.iss
; Output: build\installer\persona-desktop-<version>-setup.exe
;
; Data: the app keeps each user's store and settings.json in %LOCALAPPDATA%\persona-desktop
; (platformdirs); the uninstaller never deletes it.

#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif
#define AppName "Persona Desktop"
#define Root "..\.."

[Setup]
AppId={{6F1C0D52-3C55-4E3B-9A3E-6B0B3C9E2A71}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=Persona Desktop maintainers
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
; Per-user install without admin rights by default; an admin may choose all users.
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir={#Root}\build\installer
OutputBaseFilename=persona-desktop-{#AppVersion}-setup
SetupIconFile={#Root}\build\icons\persona-desktop.ico
UninstallDisplayIcon={app}\persona-desktop.exe
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
CloseApplications=yes

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
; Opt-in, like everything else in the app (Settings -> "Start at login" does the same later).
Name: "startatlogin"; Description: "Start {#AppName} when I sign in"; GroupDescription: "Startup:"; Flags: unchecked

[Files]
Source: "{#Root}\build\dist\persona-desktop\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\{#AppName}"; Filename: "{app}\persona-desktop.exe"
Name: "{group}\Uninstall {#AppName}"; Filename: "{uninstallexe}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\persona-desktop.exe"; Tasks: desktopicon
Name: "{userstartup}\{#AppName}"; Filename: "{app}\persona-desktop.exe"; Tasks: startatlogin

[Run]
Filename: "{app}\persona-desktop.exe"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

; No [UninstallDelete] for user data: uninstalling removes the program only.
; To delete your data too, remove %LOCALAPPDATA%\persona-desktop after uninstalling.
