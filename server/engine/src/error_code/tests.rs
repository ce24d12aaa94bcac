//! SQLSTATEs and templates as MySQL has them, and no engine or lock error left without its
//! own code.

use super::*;
use crate::error::EngineError;
use crate::lock::LockError;

#[test]
fn sqlstates_match_mysql() {
    assert_eq!(ErrorCode::AccessDenied.sql_state(), "28000");
    assert_eq!(ErrorCode::ConCount.sql_state(), "08004");
    assert_eq!(ErrorCode::ParseError.sql_state(), "42000");
    assert_eq!(ErrorCode::IncorrectGlobalLocalVar.sql_state(), "HY000");
    assert_eq!(ErrorCode::UnknownSystemVariable.sql_state(), "HY000");
    assert_eq!(ErrorCode::WrongValueForVar.sql_state(), "42000");
    assert_eq!(ErrorCode::NetPacketTooLarge.sql_state(), "08S01");
    assert_eq!(ErrorCode::MaxPreparedStmtCountReached.sql_state(), "42000");
    assert_eq!(ErrorCode::UnknownCommand.sql_state(), "08S01");
    assert_eq!(ErrorCode::NoSuchTable.sql_state(), "42S02");
    assert_eq!(ErrorCode::DupEntry.sql_state(), "23000");
    assert_eq!(ErrorCode::LockDeadlock.sql_state(), "40001");
    assert_eq!(ErrorCode::ClientInteractionTimeout.code(), 4031);
    assert_eq!(ErrorCode::TooBigDisplaywidth.sql_state(), "42000");
    assert_eq!(ErrorCode::InvalidFieldSize.sql_state(), "HY000");
    assert_eq!(ErrorCode::OutOfMemory.sql_state(), "HY001");
    assert_eq!(ErrorCode::RecordFileFull.sql_state(), "HY000");
    assert_eq!(ErrorCode::RecordFileFull.code(), 1114);
    for c in [
        ErrorCode::TableAccessDenied,
        ErrorCode::ColumnAccessDenied,
        ErrorCode::IllegalGrantForTable,
        ErrorCode::NonexistingGrant,
        ErrorCode::NonexistingTableGrant,
        ErrorCode::CantCreateUserWithGrant,
        ErrorCode::PasswordNoMatch,
    ] {
        assert_eq!(c.sql_state(), "42000", "{c:?}");
    }
    assert_eq!(ErrorCode::WrongUsage.sql_state(), "HY000");
    for (c, n, state) in [
        (ErrorCode::CantCreateFile, 1, "HY000"),
        (ErrorCode::FileNotFound, 29, "HY000"),
        (ErrorCode::WrongFieldTerminators, 1083, "42000"),
        (ErrorCode::FileExists, 1086, "HY000"),
        (ErrorCode::TooManyRows, 1172, "42000"),
        (ErrorCode::WarnTooFewRecords, 1261, "01000"),
        (ErrorCode::WarnTooManyRecords, 1262, "01000"),
        (ErrorCode::WarnNullToNotNull, 1263, "22004"),
        (ErrorCode::OptionPreventsStatement, 1290, "HY000"),
        (ErrorCode::ClientLocalFilesDisabled, 3948, "42000"),
    ] {
        assert_eq!((c.code(), c.sql_state()), (n, state), "{c:?}");
    }
    assert_eq!(ErrorCode::TableAccessDenied.code(), 1142);
}

#[test]
fn templates_are_mysqls() {
    assert_eq!(
        ErrorCode::LockWaitTimeout.template(),
        "Lock wait timeout exceeded; try restarting transaction"
    );
    assert_eq!(
        ErrorCode::NoSuchTable.template(),
        "Table '%-.192s.%-.192s' doesn't exist"
    );
    assert_eq!(ErrorCode::Unknown.template(), "Unknown error");
    assert_eq!(
        ErrorCode::TableAccessDenied.template(),
        "%-.32s command denied to user '%-.48s'@'%-.64s' for table '%-.192s'"
    );
}

/// Every engine error, one per variant: `variant_index` has no wildcard arm, so a new
/// variant fails to compile until it is listed here too.
fn every_engine_error() -> Vec<EngineError> {
    let c = || "c".to_string();
    vec![
        EngineError::OutOfRange { column: c() },
        EngineError::DataTooLong { column: c() },
        EngineError::NullNotAllowed { column: c() },
        EngineError::IncorrectValue {
            kind: "integer",
            value: c(),
            column: c(),
        },
        EngineError::IncorrectDatetime {
            kind: "date",
            value: c(),
            column: c(),
        },
        EngineError::NoDefault { column: c() },
        EngineError::DuplicateKey {
            entry: c(),
            key: c(),
        },
        EngineError::AutoIncrementExhausted,
        EngineError::NoSuchDatabase(c()),
        EngineError::DatabaseExists(c()),
        EngineError::DropNoSuchDatabase(c()),
        EngineError::NoSuchTable(c(), c()),
        EngineError::TableExists(c()),
        EngineError::UnknownTable(c()),
        EngineError::DuplicateColumn(c()),
        EngineError::DuplicateKeyName(c()),
        EngineError::MultiplePrimaryKey,
        EngineError::WrongAutoKey,
        EngineError::CantDropKey(c()),
        EngineError::TooBigPrecision {
            column: c(),
            precision: 66,
        },
        EngineError::TooBigScale {
            column: c(),
            scale: 31,
        },
        EngineError::ScaleAbovePrecision { column: c() },
        EngineError::BadColumnDefinition {
            column: c(),
            reason: c(),
        },
        EngineError::Truncated { column: c() },
        EngineError::DuplicatedMember {
            column: c(),
            member: c(),
            kind: "ENUM",
        },
        EngineError::TooBigSet { column: c() },
        EngineError::InvalidJson {
            reason: "Invalid value.",
            position: 0,
            column: c(),
        },
        EngineError::JsonUsedAsKey { column: c() },
        EngineError::CommaInSetMember { member: c() },
    ]
}

fn variant_index(e: &EngineError) -> usize {
    match e {
        EngineError::OutOfRange { .. } => 0,
        EngineError::DataTooLong { .. } => 1,
        EngineError::NullNotAllowed { .. } => 2,
        EngineError::IncorrectValue { .. } => 3,
        EngineError::IncorrectDatetime { .. } => 4,
        EngineError::NoDefault { .. } => 5,
        EngineError::DuplicateKey { .. } => 6,
        EngineError::AutoIncrementExhausted => 7,
        EngineError::NoSuchDatabase(_) => 8,
        EngineError::DatabaseExists(_) => 9,
        EngineError::DropNoSuchDatabase(_) => 10,
        EngineError::NoSuchTable(..) => 11,
        EngineError::TableExists(_) => 12,
        EngineError::UnknownTable(_) => 13,
        EngineError::DuplicateColumn(_) => 14,
        EngineError::DuplicateKeyName(_) => 15,
        EngineError::MultiplePrimaryKey => 16,
        EngineError::WrongAutoKey => 17,
        EngineError::CantDropKey(_) => 18,
        EngineError::BadColumnDefinition { .. } => 19,
        EngineError::TooBigPrecision { .. } => 20,
        EngineError::TooBigScale { .. } => 21,
        EngineError::ScaleAbovePrecision { .. } => 22,
        EngineError::Truncated { .. } => 23,
        EngineError::DuplicatedMember { .. } => 24,
        EngineError::TooBigSet { .. } => 25,
        EngineError::InvalidJson { .. } => 26,
        EngineError::JsonUsedAsKey { .. } => 27,
        EngineError::CommaInSetMember { .. } => 28,
    }
}

#[test]
fn no_engine_error_is_unknown() {
    let all = every_engine_error();
    let mut seen: Vec<usize> = all.iter().map(variant_index).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(
        seen,
        (0..=28).collect::<Vec<_>>(),
        "every variant listed once"
    );
    for e in &all {
        let code = ErrorCode::from(e);
        assert_ne!(code, ErrorCode::Unknown, "{e:?}");
        assert_ne!(code.code(), 1105, "{e:?}");
    }
}

#[test]
fn no_lock_error_is_unknown() {
    let all = [
        LockError::WaitTimeout,
        LockError::Deadlock,
        LockError::NoWait,
        LockError::Interrupted,
        LockError::TableRebuilt,
    ];
    for e in all {
        // No wildcard: a new variant fails to compile until it is listed above.
        match e {
            LockError::WaitTimeout
            | LockError::Deadlock
            | LockError::NoWait
            | LockError::Interrupted
            | LockError::TableRebuilt => {}
        }
        let code = ErrorCode::from(e);
        assert_ne!(code, ErrorCode::Unknown, "{e:?}");
        assert_ne!(code.code(), 1105, "{e:?}");
    }
    assert_eq!(ErrorCode::from(LockError::WaitTimeout).code(), 1205);
    assert_eq!(ErrorCode::from(LockError::Deadlock).code(), 1213);
    assert_eq!(ErrorCode::from(LockError::NoWait).code(), 3572);
    assert_eq!(ErrorCode::from(LockError::Interrupted).code(), 1317);
}

#[test]
fn fixed_messages_read_as_mysqls_templates() {
    for e in [
        LockError::WaitTimeout,
        LockError::Deadlock,
        LockError::NoWait,
        LockError::Interrupted,
        LockError::TableRebuilt,
    ] {
        assert_eq!(e.message(), e.code().template(), "{e:?}");
    }
    for e in [
        EngineError::AutoIncrementExhausted,
        EngineError::MultiplePrimaryKey,
        EngineError::WrongAutoKey,
    ] {
        assert_eq!(e.message(1), e.code().template(), "{e:?}");
    }
}
