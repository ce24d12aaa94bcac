//! The in-memory engine: catalog, page-latched B+tree indexes, records and cursors.
