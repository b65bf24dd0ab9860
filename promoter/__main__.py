from promoter.cli.main import main

main()
