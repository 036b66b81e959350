from kgqa.cli.main import main

main(prog_name="kgqa")
