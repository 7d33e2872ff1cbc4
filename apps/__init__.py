"""Demo applications: ordinary single-threaded Tornado apps, no tornado-stm imports."""
