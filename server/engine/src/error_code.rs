//! One vocabulary of MySQL errors for every layer: the codes tpbed emits, each with its
//! SQLSTATE and MySQL's message template. Engine and lock errors convert into it with `From`
//! (next to their own definitions, in `error` and `lock`); the server's client errors carry it.

/// The MySQL error codes tpbed emits, each with its SQLSTATE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum ErrorCode {
    /// ER_CON_COUNT_ERROR: too many connections.
    ConCount = 1040,
    /// ER_BAD_HOST_ERROR / handshake failures ("Bad handshake").
    HandshakeError = 1043,
    /// ER_DBACCESS_DENIED_ERROR.
    DbAccessDenied = 1044,
    /// ER_ACCESS_DENIED_ERROR: wrong user or password.
    AccessDenied = 1045,
    /// ER_NO_DB_ERROR: no database selected.
    NoDb = 1046,
    /// ER_UNKNOWN_COM_ERROR: unknown command byte.
    UnknownCommand = 1047,
    /// ER_BAD_NULL_ERROR: NULL into a NOT NULL column.
    BadNull = 1048,
    /// ER_BAD_DB_ERROR: unknown database.
    BadDb = 1049,
    /// ER_TABLE_EXISTS_ERROR.
    TableExists = 1050,
    /// ER_BAD_TABLE_ERROR: unknown table (DROP).
    BadTable = 1051,
    /// ER_BAD_FIELD_ERROR: unknown column.
    BadField = 1054,
    /// ER_DUP_KEYNAME.
    DupKeyName = 1061,
    /// ER_DUP_ENTRY.
    DupEntry = 1062,
    /// ER_PARSE_ERROR.
    ParseError = 1064,
    /// ER_EMPTY_QUERY.
    EmptyQuery = 1065,
    /// ER_NO_SUCH_THREAD: KILL of an unknown id.
    NoSuchThread = 1094,
    /// ER_KILL_DENIED_ERROR.
    KillDenied = 1095,
    /// ER_CANT_CREATE_THREAD: no thread could be started for a new connection.
    CantCreateThread = 1135,
    /// ER_TOO_MANY_TABLES: more tables in one join than a query block can address.
    TooManyTables = 1116,
    /// ER_NO_SUCH_TABLE.
    NoSuchTable = 1146,
    /// ER_NET_PACKET_TOO_LARGE.
    NetPacketTooLarge = 1153,
    /// ER_NET_READ_ERROR.
    NetReadError = 1158,
    /// ER_NET_READ_INTERRUPTED.
    NetReadInterrupted = 1159,
    /// ER_CANNOT_USER: CREATE/DROP USER failed.
    CannotUser = 1396,
    /// ER_PASSWORD_NO_MATCH: SET PASSWORD FOR an account that does not exist.
    PasswordNoMatch = 1133,
    /// ER_NONEXISTING_GRANT: REVOKE of a global or database grant the account lacks.
    NonexistingGrant = 1141,
    /// ER_TABLEACCESS_DENIED_ERROR: a table privilege is missing.
    TableAccessDenied = 1142,
    /// ER_COLUMNACCESS_DENIED_ERROR: a column privilege is missing.
    ColumnAccessDenied = 1143,
    /// ER_ILLEGAL_GRANT_FOR_TABLE: a privilege that has no table level.
    IllegalGrantForTable = 1144,
    /// ER_NONEXISTING_TABLE_GRANT: REVOKE of a table grant the account lacks.
    NonexistingTableGrant = 1147,
    /// ER_WRONG_USAGE: a global-only privilege granted on a database.
    WrongUsage = 1221,
    /// ER_CANT_CREATE_USER_WITH_GRANT: GRANT to an account that does not exist.
    CantCreateUserWithGrant = 1410,
    /// ER_TABLE_DEF_CHANGED: a read view older than the table's last rebuild.
    TableDefChanged = 1412,
    /// ER_LOCK_WAIT_TIMEOUT.
    LockWaitTimeout = 1205,
    /// ER_LOCK_DEADLOCK.
    LockDeadlock = 1213,
    /// ER_SPECIFIC_ACCESS_DENIED_ERROR: a privilege is missing.
    SpecificAccessDenied = 1227,
    /// ER_LOCAL_VARIABLE: SESSION variable set with SET GLOBAL.
    LocalVariable = 1228,
    /// ER_GLOBAL_VARIABLE: GLOBAL variable set with SET SESSION.
    GlobalVariable = 1229,
    /// ER_NO_DEFAULT: variable has no default.
    NoDefault = 1230,
    /// ER_WRONG_VALUE_FOR_VAR.
    WrongValueForVar = 1231,
    /// ER_WRONG_TYPE_FOR_VAR.
    WrongTypeForVar = 1232,
    /// ER_INCORRECT_GLOBAL_LOCAL_VAR: read-only variable.
    IncorrectGlobalLocalVar = 1238,
    /// ER_NOT_SUPPORTED_YET.
    NotSupportedYet = 1235,
    /// ER_NO_BINARY_LOGGING: SHOW BINARY LOGS with the binary log off.
    NoBinaryLogging = 1381,
    /// ER_UNKNOWN_STMT_HANDLER.
    UnknownStmtHandler = 1243,
    /// ER_UNSUPPORTED_PS: statement cannot be prepared.
    UnsupportedPs = 1295,
    /// ER_QUERY_INTERRUPTED.
    QueryInterrupted = 1317,
    /// ER_SP_DOES_NOT_EXIST (unknown function).
    SpDoesNotExist = 1305,
    /// ER_UNKNOWN_SYSTEM_VARIABLE.
    UnknownSystemVariable = 1193,
    /// ER_WRONG_ARGUMENTS.
    WrongArguments = 1210,
    /// ER_WRONG_PARAMCOUNT_TO_PROCEDURE / wrong argument count to a native function.
    WrongParamcountToNativeFct = 1582,
    /// ER_DB_CREATE_EXISTS.
    DbCreateExists = 1007,
    /// ER_DB_DROP_EXISTS.
    DbDropExists = 1008,
    /// ER_MAX_PREPARED_STMT_COUNT_REACHED.
    MaxPreparedStmtCountReached = 1461,
    /// ER_WARN_DATA_OUT_OF_RANGE.
    WarnDataOutOfRange = 1264,
    /// ER_DATA_TOO_LONG.
    DataTooLong = 1406,
    /// ER_TRUNCATED_WRONG_VALUE.
    TruncatedWrongValue = 1292,
    /// ER_DIVISION_BY_ZERO.
    DivisionByZero = 1365,
    /// ER_OPERAND_COLUMNS.
    OperandColumns = 1241,
    /// ER_SUBQUERY_NO_1_ROW: a scalar subquery returned more than one row.
    SubqueryNo1Row = 1242,
    /// ER_DATA_OUT_OF_RANGE: arithmetic overflow.
    DataOutOfRange = 1690,
    /// ER_NO_TABLES_USED: `SELECT *` without a table.
    NoTablesUsed = 1096,
    /// ER_UNKNOWN_CHARACTER_SET.
    UnknownCharacterSet = 1115,
    /// ER_UNKNOWN_COLLATION.
    UnknownCollation = 1273,
    /// ER_COLLATION_CHARSET_MISMATCH: `CHARACTER SET x COLLATE y` with y not of x.
    CollationCharsetMismatch = 1253,
    /// ER_CANT_CHANGE_TX_CHARACTERISTICS.
    CantChangeTxCharacteristics = 1568,
    /// ER_ILLEGAL_PRIVILEGE_LEVEL.
    IllegalPrivilegeLevel = 3619,
    /// ER_LOCK_NOWAIT.
    LockNowait = 3572,
    /// ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION: a write in START TRANSACTION READ ONLY.
    ReadOnlyTransaction = 1792,
    /// ER_VARIABLE_IS_READONLY: a session-read-only variable set without GLOBAL.
    VariableIsReadonly = 1621,
    /// ER_CLIENT_INTERACTION_TIMEOUT: disconnected for inactivity (8.0.24+).
    ClientInteractionTimeout = 4031,
    /// ER_UNKNOWN_ERROR.
    Unknown = 1105,
    /// ER_OUTOFMEMORY: an allocation a statement needed failed.
    OutOfMemory = 1037,
    /// ER_RECORD_FILE_FULL: a write would take the server past its memory limit
    /// (`tpbed_max_memory`, or what the address-space limit leaves).
    RecordFileFull = 1114,
    /// ER_WARN_ALLOWED_PACKET_OVERFLOWED: a function's result would exceed
    /// `max_allowed_packet` (a warning; the result is NULL).
    WarnAllowedPacketOverflowed = 1301,
    /// ER_ILLEGAL_VALUE_FOR_TYPE: a literal out of its type's range (`1e309`).
    IllegalValueForType = 1367,
    /// ER_TOO_BIG_SCALE: a DECIMAL scale above 30.
    TooBigScale = 1425,
    /// ER_TOO_BIG_PRECISION: a DECIMAL precision above 65.
    TooBigPrecision = 1426,
    /// ER_M_BIGGER_THAN_D: a DECIMAL scale above its precision.
    MBiggerThanD = 1427,
    /// ER_INVALID_YEAR_COLUMN_LENGTH: YEAR with a width other than 4.
    InvalidYearColumnLength = 1818,
    /// ER_TOO_BIG_DISPLAYWIDTH: a BIT column wider than 64 bits.
    TooBigDisplaywidth = 1439,
    /// ER_INVALID_FIELD_SIZE: a BIT(0) column.
    InvalidFieldSize = 3013,
    /// ER_STACK_OVERRUN_NEED_MORE: a statement nests deeper than the thread's stack allows.
    StackOverrunNeedMore = 1436,
    /// ER_DUP_FIELDNAME: two columns with one name.
    DupFieldName = 1060,
    /// ER_MULTIPLE_PRI_KEY.
    MultiplePriKey = 1068,
    /// ER_WRONG_AUTO_KEY.
    WrongAutoKey = 1075,
    /// ER_NO_DEFAULT_FOR_FIELD: a NOT NULL column without default was not given.
    NoDefaultForField = 1364,
    /// ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: not a number of the column's kind.
    TruncatedWrongValueForField = 1366,
    /// ER_AUTOINC_READ_FAILED: AUTO_INCREMENT exhausted.
    AutoincReadFailed = 1467,
    /// ER_WRONG_VALUE_COUNT_ON_ROW.
    WrongValueCountOnRow = 1136,
    /// ER_NONUNIQ_TABLE: a table alias used twice.
    NonUniqTable = 1066,
    /// ER_NON_UNIQ_ERROR: an ambiguous column name.
    NonUniqField = 1052,
    /// ER_KEY_DOES_NOT_EXITS: an index hint or DROP INDEX names no index.
    KeyDoesNotExist = 1176,
    /// ER_CANT_DROP_FIELD_OR_KEY.
    CantDropFieldOrKey = 1091,
    /// ER_INVALID_GROUP_FUNC_USE.
    InvalidGroupFuncUse = 1111,
    /// ER_KEY_COLUMN_DOES_NOT_EXITS.
    KeyColumnDoesNotExist = 1072,
    /// ER_INVALID_DEFAULT.
    InvalidDefault = 1067,
    /// ER_ILLEGAL_HA: the storage engine lacks an option (a note for `DISABLE KEYS`).
    IllegalHa = 1031,
    /// ER_CANT_REMOVE_ALL_FIELDS: ALTER TABLE would drop every column.
    CantRemoveAllFields = 1090,
    /// ER_CONSTRAINT_NOT_FOUND: `DROP CONSTRAINT` of an unknown name.
    ConstraintNotFound = 3940,
    /// ER_CHECK_CONSTRAINT_FUNCTION_IS_NOT_ALLOWED: a check with a subquery.
    CheckConstraintFunctionIsNotAllowed = 3814,
    /// ER_CHECK_CONSTRAINT_VIOLATED.
    CheckConstraintViolated = 3819,
    /// ER_DEPENDENT_BY_CHECK_CONSTRAINT: a column a CHECK constraint uses is dropped or
    /// renamed.
    DependentByCheckConstraint = 3959,
    /// ER_ROW_IS_REFERENCED_2: a parent row a foreign key's child rows reference.
    RowIsReferenced = 1451,
    /// ER_NO_REFERENCED_ROW_2: a child row whose parent row does not exist.
    NoReferencedRow = 1452,
    /// ER_FK_CANNOT_DROP_PARENT: DROP TABLE of a table a foreign key references.
    FkCannotDropParent = 3730,
    /// ER_TABLE_NOT_LOCKED: a table used under LOCK TABLES that it did not lock.
    TableNotLocked = 1100,
    /// ER_WARN_DATA_TRUNCATED: a value that is no member of an ENUM or SET (an error in
    /// strict mode, with the warning's SQLSTATE).
    WarnDataTruncated = 1265,
    /// ER_DUPLICATED_VALUE_IN_TYPE: an ENUM or SET declaring one member twice.
    DuplicatedValueInType = 1291,
    /// ER_TOO_BIG_SET: a SET of more than 64 members.
    TooBigSet = 1097,
    /// ER_INVALID_JSON_TEXT: a value for a JSON column that is not JSON.
    InvalidJsonText = 3140,
    /// ER_INVALID_JSON_TEXT_IN_PARAM: a JSON function's argument that is not JSON.
    InvalidJsonTextInParam = 3141,
    /// ER_INVALID_JSON_PATH: a malformed JSON path.
    InvalidJsonPath = 3143,
    /// ER_JSON_USED_AS_KEY: an index over a JSON column.
    JsonUsedAsKey = 3152,
    /// ER_JSON_DOCUMENT_NULL_KEY: JSON_OBJECT with a NULL key.
    JsonDocumentNullKey = 3158,
    /// EE_CANTCREATEFILE: an output file cannot be created.
    CantCreateFile = 1,
    /// EE_FILENOTFOUND: an input file cannot be opened.
    FileNotFound = 29,
    /// ER_WRONG_FIELD_TERMINATORS: ENCLOSED BY / ESCAPED BY longer than one character.
    WrongFieldTerminators = 1083,
    /// ER_FILE_EXISTS_ERROR: the output file exists.
    FileExists = 1086,
    /// ER_TOO_MANY_ROWS: INTO DUMPFILE (or a scalar INTO) of more than one row.
    TooManyRows = 1172,
    /// ER_WARN_TOO_FEW_RECORDS: a LOAD DATA line with fewer fields than columns.
    WarnTooFewRecords = 1261,
    /// ER_WARN_TOO_MANY_RECORDS: a LOAD DATA line with more fields than columns.
    WarnTooManyRecords = 1262,
    /// ER_WARN_NULL_TO_NOTNULL: `\N` loaded into a NOT NULL column.
    WarnNullToNotNull = 1263,
    /// ER_OPTION_PREVENTS_STATEMENT: a server option (`secure_file_priv`) refuses the statement.
    OptionPreventsStatement = 1290,
    /// ER_CLIENT_LOCAL_FILES_DISABLED: LOAD DATA LOCAL with `local_infile` off on either side.
    ClientLocalFilesDisabled = 3948,
}

impl ErrorCode {
    /// The numeric MySQL error code.
    pub fn code(self) -> u16 {
        self as u16
    }

    /// The SQLSTATE MySQL sends with this code.
    pub fn sql_state(self) -> &'static str {
        use ErrorCode::*;
        match self {
            ConCount => "08004",
            HandshakeError => "08S01",
            DbAccessDenied
            | TableAccessDenied
            | ColumnAccessDenied
            | IllegalGrantForTable
            | NonexistingGrant
            | NonexistingTableGrant
            | CantCreateUserWithGrant
            | PasswordNoMatch
            | ParseError
            | EmptyQuery
            | BadDb
            | SpecificAccessDenied
            | WrongValueForVar
            | WrongTypeForVar
            | NoDefault
            | MaxPreparedStmtCountReached
            | BadTable
            | TableExists
            | BadField
            | NoSuchTable
            | SpDoesNotExist
            | WrongParamcountToNativeFct
            | DupKeyName
            | MultiplePriKey
            | WrongAutoKey
            | NonUniqTable
            | KeyDoesNotExist
            | CantDropFieldOrKey
            | DupFieldName
            | InvalidDefault
            | KeyColumnDoesNotExist
            | CantRemoveAllFields
            | UnknownCharacterSet
            | CollationCharsetMismatch
            | TooBigScale
            | TooBigPrecision
            | TooBigDisplaywidth
            | MBiggerThanD => match self {
                TableExists => "42S01",
                BadTable | NoSuchTable => "42S02",
                BadField => "42S22",
                DupFieldName => "42S21",
                _ => "42000",
            },
            AccessDenied => "28000",
            NoDb => "3D000",
            UnknownCommand | NetPacketTooLarge | NetReadError | NetReadInterrupted => "08S01",
            BadNull | DupEntry | NonUniqField | RowIsReferenced | NoReferencedRow => "23000",
            WrongValueCountOnRow => "21S01",
            WarnDataOutOfRange | DataOutOfRange => "22003",
            DataTooLong => "22001",
            TruncatedWrongValue => "22007",
            DivisionByZero => "22012",
            OperandColumns | SubqueryNo1Row => "21000",
            QueryInterrupted => "70100",
            OutOfMemory => "HY001",
            IllegalValueForType => "22007",
            LockDeadlock => "40001",
            CantChangeTxCharacteristics => "25001",
            ReadOnlyTransaction => "25006",
            NotSupportedYet | InvalidJsonPath | JsonUsedAsKey => "42000",
            WrongFieldTerminators | TooManyRows | ClientLocalFilesDisabled => "42000",
            WarnDataTruncated | WarnTooFewRecords | WarnTooManyRecords => "01000",
            WarnNullToNotNull => "22004",
            InvalidJsonText | InvalidJsonTextInParam | JsonDocumentNullKey => "22032",
            _ => "HY000",
        }
    }
    /// MySQL's message template for this code (its error message file, printf-style
    /// placeholders): the text a message with this code should read as, once filled in.
    pub fn template(self) -> &'static str {
        use ErrorCode::*;
        match self {
            ConCount => "Too many connections",
            HandshakeError => "Bad handshake",
            DbAccessDenied => "Access denied for user '%-.48s'@'%-.64s' to database '%-.192s'",
            AccessDenied => "Access denied for user '%-.48s'@'%-.64s' (using password: %s)",
            NoDb => "No database selected",
            UnknownCommand => "Unknown command",
            BadNull => "Column '%-.192s' cannot be null",
            BadDb => "Unknown database '%-.192s'",
            TableExists => "Table '%-.192s' already exists",
            BadTable => "Unknown table '%-.129s'",
            BadField => "Unknown column '%-.192s' in '%-.192s'",
            DupKeyName => "Duplicate key name '%-.192s'",
            DupEntry => "Duplicate entry '%-.64s' for key '%-.385s'",
            ParseError => "%s near '%-.80s' at line %d",
            EmptyQuery => "Query was empty",
            NoSuchThread => "Unknown thread id: %lu",
            CantCreateThread => "Can't create a new thread (errno %d); if you are not out of available memory, you can consult the manual for a possible OS-dependent bug",
            TooManyTables => "Too many tables; MySQL can only use %d tables in a join",
            KillDenied => "You are not owner of thread %lu",
            NoSuchTable => "Table '%-.192s.%-.192s' doesn't exist",
            NetPacketTooLarge => "Got a packet bigger than 'max_allowed_packet' bytes",
            NetReadError => "Got an error reading communication packets",
            NetReadInterrupted => "Got timeout reading communication packets",
            CannotUser => "Operation %s failed for %.256s",
            PasswordNoMatch => "Can't find any matching row in the user table",
            NonexistingGrant => "There is no such grant defined for user '%-.48s' on host '%-.64s'",
            TableAccessDenied => "%-.32s command denied to user '%-.48s'@'%-.64s' for table '%-.192s'",
            ColumnAccessDenied => "%-.32s command denied to user '%-.48s'@'%-.64s' for column '%-.192s' in table '%-.192s'",
            IllegalGrantForTable => "Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used",
            NonexistingTableGrant => "There is no such grant defined for user '%-.48s' on host '%-.64s' on table '%-.192s'",
            WrongUsage => "Incorrect usage of %s and %s",
            CantCreateUserWithGrant => "You are not allowed to create a user with GRANT",
            TableDefChanged => "Table definition has changed, please retry transaction",
            LockWaitTimeout => "Lock wait timeout exceeded; try restarting transaction",
            LockDeadlock => "Deadlock found when trying to get lock; try restarting transaction",
            SpecificAccessDenied => "Access denied; you need (at least one of) the %-.128s privilege(s) for this operation",
            LocalVariable => "Variable '%-.64s' is a SESSION variable and can't be used with SET GLOBAL",
            GlobalVariable => "Variable '%-.64s' is a GLOBAL variable and should be set with SET GLOBAL",
            NoDefault => "Variable '%-.64s' doesn't have a default value",
            WrongValueForVar => "Variable '%-.64s' can't be set to the value of '%-.200s'",
            WrongTypeForVar => "Incorrect argument type to variable '%-.64s'",
            IncorrectGlobalLocalVar => "Variable '%-.64s' is a %s variable",
            NotSupportedYet => "This version of MySQL doesn't yet support '%s'",
            NoBinaryLogging => "You are not using binary logging",
            UnknownStmtHandler => "Unknown prepared statement handler (%.*s) given to %s",
            UnsupportedPs => "This command is not supported in the prepared statement protocol yet",
            QueryInterrupted => "Query execution was interrupted",
            SpDoesNotExist => "%s %s does not exist",
            UnknownSystemVariable => "Unknown system variable '%-.64s'",
            WrongArguments => "Incorrect arguments to %s",
            WrongParamcountToNativeFct => "Incorrect parameter count in the call to native function '%-.192s'",
            DbCreateExists => "Can't create database '%-.192s'; database exists",
            DbDropExists => "Can't drop database '%-.192s'; database doesn't exist",
            MaxPreparedStmtCountReached => "Can't create more than max_prepared_stmt_count statements (current value: %u)",
            WarnDataOutOfRange => "Out of range value for column '%s' at row %ld",
            DataTooLong => "Data too long for column '%s' at row %ld",
            TruncatedWrongValue => "Truncated incorrect %-.32s value: '%-.128s'",
            DivisionByZero => "Division by 0",
            OperandColumns => "Operand should contain %d column(s)",
            SubqueryNo1Row => "Subquery returns more than 1 row",
            DataOutOfRange => "%-.256s value is out of range in '%-.256s'",
            NoTablesUsed => "No tables used",
            UnknownCharacterSet => "Unknown character set: '%-.64s'",
            UnknownCollation => "Unknown collation: '%-.64s'",
            CollationCharsetMismatch => "COLLATION '%s' is not valid for CHARACTER SET '%s'",
            CantChangeTxCharacteristics => "Transaction characteristics can't be changed while a transaction is in progress",
            IllegalPrivilegeLevel => "Illegal privilege level specified for %s",
            LockNowait => "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.",
            ReadOnlyTransaction => "Cannot execute statement in a READ ONLY transaction.",
            VariableIsReadonly => "%s variable '%s' is read-only. Use SET %s to assign the value",
            ClientInteractionTimeout => "The client was disconnected by the server because of inactivity. See wait_timeout and interactive_timeout for configuring this behavior.",
            Unknown => "Unknown error",
            RecordFileFull => "The table '%s' is full",
            OutOfMemory => "Out of memory; restart server and try again (needed %d bytes)",
            WarnAllowedPacketOverflowed => "Result of %s() was larger than max_allowed_packet (%ld) - truncated",
            IllegalValueForType => "Illegal %s '%-.192s' value found during parsing",
            TooBigScale => "Too big scale %u specified for column '%-.192s'. Maximum is %lu.",
            TooBigPrecision => "Too-big precision %u specified for '%-.192s'. Maximum is %lu.",
            TooBigDisplaywidth => "Display width out of range for '%-.192s' (max = %lu)",
            InvalidYearColumnLength => "Supports only YEAR or YEAR(4) column.",
            InvalidFieldSize => "Invalid size for column '%-.192s'.",
            MBiggerThanD => "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '%-.192s').",
            StackOverrunNeedMore => "Thread stack overrun:  %ld bytes used of a %ld byte stack, and %ld bytes needed.  Use 'mysqld --thread_stack=#' to specify a bigger stack.",
            DupFieldName => "Duplicate column name '%-.192s'",
            MultiplePriKey => "Multiple primary key defined",
            WrongAutoKey => "Incorrect table definition; there can be only one auto column and it must be defined as a key",
            NoDefaultForField => "Field '%-.192s' doesn't have a default value",
            TruncatedWrongValueForField => "Incorrect %-.32s value: '%-.128s' for column '%.192s' at row %ld",
            AutoincReadFailed => "Failed to read auto-increment value from storage engine",
            WrongValueCountOnRow => "Column count doesn't match value count at row %ld",
            NonUniqTable => "Not unique table/alias: '%-.192s'",
            NonUniqField => "Column '%-.192s' in %-.192s is ambiguous",
            KeyDoesNotExist => "Key '%-.192s' doesn't exist in table '%-.192s'",
            CantDropFieldOrKey => "Can't DROP '%-.192s'; check that column/key exists",
            InvalidGroupFuncUse => "Invalid use of group function",
            KeyColumnDoesNotExist => "Key column '%-.192s' doesn't exist in table",
            InvalidDefault => "Invalid default value for '%-.192s'",
            IllegalHa => "Table storage engine for '%-.192s' doesn't have this option",
            CantRemoveAllFields => "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
            ConstraintNotFound => "Constraint '%-.192s' does not exist.",
            CheckConstraintViolated => "Check constraint '%-.192s' is violated.",
            CheckConstraintFunctionIsNotAllowed => "An expression of a check constraint '%-.192s' contains disallowed function.",
            TableNotLocked => "Table '%-.192s' was not locked with LOCK TABLES",
            FkCannotDropParent => "Cannot drop table '%s' referenced by a foreign key constraint '%s' on table '%s'.",
            RowIsReferenced => "Cannot delete or update a parent row: a foreign key constraint fails (%.192s)",
            NoReferencedRow => "Cannot add or update a child row: a foreign key constraint fails (%.192s)",
            DependentByCheckConstraint => "Check constraint '%-.192s' uses column '%-.192s', hence column cannot be dropped or renamed.",
            WarnDataTruncated => "Data truncated for column '%s' at row %ld",
            DuplicatedValueInType => "Column '%-.100s' has duplicated value '%-.64s' in %s",
            TooBigSet => "Too many strings for column %-.192s and SET",
            InvalidJsonText => "Invalid JSON text: \"%s\" at position %u in value for column '%-.200s'.",
            InvalidJsonTextInParam => "Invalid JSON text in argument %u to function %s: \"%s\" at position %u.%s",
            InvalidJsonPath => "Invalid JSON path expression. The error is around character position %u.%s",
            JsonDocumentNullKey => "JSON documents may not contain NULL member names.",
            JsonUsedAsKey => "JSON column '%-.192s' supports indexing only via generated columns on a specified JSON path.",
            CantCreateFile => "Can't create/write to file '%s' (OS errno %d - %s)",
            FileNotFound => "File '%s' not found (OS errno %d - %s)",
            WrongFieldTerminators => "Field separator argument is not what is expected; check the manual",
            FileExists => "File '%-.200s' already exists",
            TooManyRows => "Result consisted of more than one row",
            WarnTooFewRecords => "Row %ld doesn't contain data for all columns",
            WarnTooManyRecords => "Row %ld was truncated; it contained more data than there were input columns",
            WarnNullToNotNull => "Column set to default value; NULL supplied to NOT NULL column '%s' at row %ld",
            OptionPreventsStatement => "The MySQL server is running with the %s option so it cannot execute this statement",
            ClientLocalFilesDisabled => "Loading local data is disabled; this must be enabled on both the client and server sides",
        }
    }
}

#[cfg(test)]
mod tests;
