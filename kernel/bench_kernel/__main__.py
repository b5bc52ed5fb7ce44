"""`python -m bench_kernel` runs the `bench` command line (for when the console script is not on PATH)."""

from bench_kernel.cli import main

if __name__ == "__main__":
    main()
