from adopter.cli.app import main

main()
