from shellgate.cli import main

main()
