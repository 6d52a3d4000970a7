from fxlab.cli.main import main

main()
