//! Harness for integration tests that start the real `tpbed-server` binary.
