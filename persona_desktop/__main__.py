from persona_desktop.cli import main

raise SystemExit(main())
