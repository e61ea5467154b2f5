"""``python -m advisor`` runs the command line, exactly like the ``advisor`` script."""

from advisor.cli import main

if __name__ == "__main__":
    main()
