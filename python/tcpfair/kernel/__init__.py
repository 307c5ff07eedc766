"""Building blocks of the kernel backend (``tcpfair.backends.kernel``).

- ``topology``: the dumbbell as data (namespaces, links, addresses, delays) from a Scenario;
- ``commands``: pure builders of ``ip``/``tc``/``ethtool``/``sysctl``/``iperf3`` argv lists;
- ``procs``: spawning processes inside namespaces, the run's state file, cleanup;
- ``capabilities``: what this machine can run (``tcpfair doctor`` and ``check()``);
- ``validate``: the per-run checks recorded in ``meta["checks"]``;
- ``shortflows``: tcpfair-traffic's output → the short-flows table (FCTs);
- ``tools``: where the system tools and our own programs (linkem, tcpfair-traffic) come from;
- ``runner``: one run from set-up to tear-down.
"""
