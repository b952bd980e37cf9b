//! ICMP echo (and TCP-connect) round trips: `hostbench ping` and the ping personality.
