from promoter.cli import main

main()
