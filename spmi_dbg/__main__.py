from spmi_dbg.cli import main

raise SystemExit(main())
