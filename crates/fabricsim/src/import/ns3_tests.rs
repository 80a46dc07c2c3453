//! `from-ns3` on configs written by the tests.
