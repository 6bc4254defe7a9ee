from thoughtloom.cli.main import main

main()
