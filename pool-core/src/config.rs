//! Pool configuration: start-up settings in [`PoolConfig`], the dynamic ones shared as atomics
//! in [`PoolKnobs`]. Invariant: a value stored in `PoolKnobs` has passed the same validation
//! MySQL applies to `SET GLOBAL`, so the scheduler never reads an out-of-range knob.

// Knobs use std atomics even under loom: they publish no other memory (every read is Relaxed
// and taken as "the value at the next decision"), so modelling them would only grow the state
// space of the loom models without checking anything.
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};

/// Which readiness backend the pool's groups use (`--tpbed-thread-pool-poller`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollerKind {
    /// epoll with `EPOLLONESHOT`, re-armed with `EPOLL_CTL_MOD` after each statement.
    Epoll,
    /// io_uring one-shot poll requests; re-arms pushed by workers under the group mutex.
    IoUring,
}

impl PollerKind {
    /// The option value: `epoll` or `io-uring`.
    pub fn name(self) -> &'static str {
        match self {
            PollerKind::Epoll => "epoll",
            PollerKind::IoUring => "io-uring",
        }
    }

    /// Parses `epoll` / `io-uring` (also `io_uring`, `uring`).
    pub fn parse(s: &str) -> Option<PollerKind> {
        match s.to_ascii_lowercase().as_str() {
            "epoll" => Some(PollerKind::Epoll),
            "io-uring" | "io_uring" | "uring" => Some(PollerKind::IoUring),
            _ => None,
        }
    }
}

/// How statement bytes move between a group and its connections (`tpbed_thread_pool_io`,
/// ours).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoMode {
    /// The poller reports readiness; the attached thread reads and writes the socket itself.
    Poll,
    /// Each group's io_uring receives a statement's bytes and sends its reply.
    Ring,
}

impl IoMode {
    /// The variable's value: `poll` or `ring`.
    pub fn name(self) -> &'static str {
        match self {
            IoMode::Poll => "poll",
            IoMode::Ring => "ring",
        }
    }

    /// Parses `poll` / `ring`.
    pub fn parse(s: &str) -> Option<IoMode> {
        match s.to_ascii_lowercase().as_str() {
            "poll" => Some(IoMode::Poll),
            "ring" => Some(IoMode::Ring),
            _ => None,
        }
    }
}

/// `tpbed_thread_pool_pin` (ours, not MySQL's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinMode {
    /// No CPU affinity (default).
    Off,
    /// Group g's threads run on cores {c : c mod size = g mod ncores}.
    Group,
}

/// `tpbed_thread_pool_rails` (ours): which safety rails the pool enforces whatever its
/// scheduling policy decides (`policy` module docs). Both are on by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rails {
    /// `open_transaction`: a queued statement of an open transaction, or of a connection that
    /// holds locks (`LOCK TABLES`), passes an admission refusal.
    pub open_transaction: bool,
    /// `admin`: the Admin group passes every credit refusal.
    pub admin: bool,
}

impl Rails {
    /// Every rail on (the default).
    pub const ALL: Rails = Rails {
        open_transaction: true,
        admin: true,
    };
    /// Every rail off: the policy alone decides, as MySQL's rules do.
    pub const NONE: Rails = Rails {
        open_transaction: false,
        admin: false,
    };
    /// The variable's members, in its order.
    pub const NAMES: &'static [&'static str] = &["open_transaction", "admin"];

    /// Parses the variable's value, a comma-separated list of [`Rails::NAMES`] (any case,
    /// empty for none).
    pub fn parse(list: &str) -> Option<Rails> {
        let mut r = Rails::NONE;
        for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part.to_ascii_lowercase().as_str() {
                "open_transaction" => r.open_transaction = true,
                "admin" => r.admin = true,
                _ => return None,
            }
        }
        Some(r)
    }

    /// The variable's value: the members on, in [`Rails::NAMES`] order.
    pub fn value(self) -> String {
        let on = [self.open_transaction, self.admin];
        Rails::NAMES
            .iter()
            .zip(on)
            .filter(|(_, on)| *on)
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// `thread_pool_algorithm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// 0: low concurrency (direct execution, one hot thread polls and executes).
    LowConcurrency,
    /// 1: high concurrency (no direct execution when `query_threads_per_group` > 1).
    HighConcurrency,
}

/// Start-up configuration. Fields mirror MySQL's variables; the dynamic ones seed a
/// [`PoolKnobs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    /// `thread_pool_size`: normal groups, 1..=512, read-only. Default clamp(cores/2, 1, 16)
    /// (MySQL trunk source; the 8.x manual says 16).
    pub size: u32,
    /// `thread_pool_algorithm`, read-only. Default 1 (trunk source; the manual says 0).
    pub algorithm: Algorithm,
    /// `thread_pool_dedicated_listeners`, read-only, default OFF; forced OFF (with a warning)
    /// when `max_transactions_limit` is 0 at start-up.
    pub dedicated_listeners: bool,
    /// `thread_pool_stall_limit` in 10 ms units, 4..=600, default 6 (60 ms). Dynamic.
    pub stall_limit: u32,
    /// `thread_pool_prio_kickup_timer` in ms, default 1000; 0 puts every event in the high
    /// queue. Dynamic.
    pub prio_kickup_timer: u32,
    /// `thread_pool_max_unused_threads` per group, 0..=4096, default 32; 0 = no limit. Dynamic.
    pub max_unused_threads: u32,
    /// `thread_pool_max_active_query_threads` per group, 0..=512, default 0 = off; ignored
    /// while a transaction limit is set. Dynamic.
    pub max_active_query_threads: u32,
    /// `thread_pool_max_transactions_limit`, 0..=1000000, default MIN(32 × size, 512)
    /// (trunk source; the manual says 0). Per-group share ceil(limit / size). Dynamic.
    pub max_transactions_limit: u32,
    /// `thread_pool_transaction_delay` in ms, 0..=300000, default 0. Dynamic.
    pub transaction_delay: u32,
    /// `thread_pool_query_threads_per_group`, 1..=4096, default 2 (trunk; manual 1). Dynamic.
    pub query_threads_per_group: u32,
    /// `thread_pool_connection_report_interval` in s, 0 or 60..=600, default 120. Dynamic.
    pub connection_report_interval: u32,
    /// `thread_pool_longrun_trx_limit` in ms, 10..=86400000, default 2000. Dynamic.
    pub longrun_trx_limit: u32,
    /// `--tpbed-thread-pool-poller` (ours): epoll (default) or io-uring.
    pub poller: PollerKind,
    /// `tpbed_thread_pool_io` (ours): poll (default) or ring, which implies the io_uring
    /// backend.
    pub io: IoMode,
    /// `tpbed_thread_pool_pin` (ours): off (default) or group.
    pub pin: PinMode,
    /// `tpbed_thread_pool_steal` (ours): off (default); on lets an idle group run statements
    /// queued in a stalled or overloaded group.
    pub steal: bool,
    /// `tpbed_thread_pool_policy` (ours): the name of a registered scheduling policy
    /// (`policy::REGISTRY`), `mysql` by default; any case (the pool's start-up report gives
    /// it as registered).
    pub policy: String,
    /// `tpbed_thread_pool_rails` (ours): the safety rails in force, all by default.
    pub rails: Rails,
    /// MariaDB's `thread_pool_oversubscribe`, 1..=1000, default 3: how many threads beyond
    /// one a group may run at once under the `mariadb` policy. Dynamic.
    pub oversubscribe: u32,
    /// `tpbed_thread_pool_time_slice` (ours) in ms, 1..=100000, default 10: the quantum after
    /// which the `time-slice` policy asks a running statement to yield. Dynamic.
    pub time_slice: u32,
}

/// Inclusive ranges of the variables, as MySQL declares them.
pub(crate) mod ranges {
    /// `thread_pool_size`.
    pub(crate) const SIZE: (u32, u32) = (1, 512);
    /// `thread_pool_stall_limit` (10 ms units).
    pub(crate) const STALL_LIMIT: (u32, u32) = (4, 600);
    /// `thread_pool_prio_kickup_timer` (ms).
    pub(crate) const PRIO_KICKUP_TIMER: (u32, u32) = (0, u32::MAX);
    /// `thread_pool_max_unused_threads`.
    pub(crate) const MAX_UNUSED_THREADS: (u32, u32) = (0, 4096);
    /// `thread_pool_max_active_query_threads`.
    pub(crate) const MAX_ACTIVE_QUERY_THREADS: (u32, u32) = (0, 512);
    /// `thread_pool_max_transactions_limit`.
    pub(crate) const MAX_TRANSACTIONS_LIMIT: (u32, u32) = (0, 1_000_000);
    /// `thread_pool_transaction_delay` (ms).
    pub(crate) const TRANSACTION_DELAY: (u32, u32) = (0, 300_000);
    /// `thread_pool_query_threads_per_group`.
    pub(crate) const QUERY_THREADS_PER_GROUP: (u32, u32) = (1, 4096);
    /// `thread_pool_connection_report_interval` (s); 0 is also allowed.
    pub(crate) const CONNECTION_REPORT_INTERVAL: (u32, u32) = (60, 600);
    /// `thread_pool_longrun_trx_limit` (ms).
    pub(crate) const LONGRUN_TRX_LIMIT: (u32, u32) = (10, 86_400_000);
    /// MariaDB's `thread_pool_oversubscribe`.
    pub(crate) const OVERSUBSCRIBE: (u32, u32) = (1, 1000);
    /// `tpbed_thread_pool_time_slice` (ms).
    pub(crate) const TIME_SLICE: (u32, u32) = (1, 100_000);
}

impl PoolConfig {
    /// MySQL's defaults for a machine with `ncpu` logical CPUs.
    pub fn mysql_defaults(ncpu: usize) -> PoolConfig {
        let size = (ncpu / 2).clamp(1, 16) as u32;
        PoolConfig {
            size,
            algorithm: Algorithm::HighConcurrency,
            dedicated_listeners: false,
            stall_limit: 6,
            prio_kickup_timer: 1000,
            max_unused_threads: 32,
            max_active_query_threads: 0,
            max_transactions_limit: default_max_transactions_limit(size),
            transaction_delay: 0,
            query_threads_per_group: 2,
            connection_report_interval: 120,
            longrun_trx_limit: 2000,
            poller: PollerKind::Epoll,
            io: IoMode::Poll,
            pin: PinMode::Off,
            steal: false,
            policy: "mysql".to_string(),
            rails: Rails::ALL,
            oversubscribe: 3,
            time_slice: 10,
        }
    }

    /// Applies MySQL's start-up corrections and range checks, returning the warnings to log:
    /// dedicated listeners are forced OFF when the transaction limit is 0, and
    /// `query_threads_per_group` is lowered to the per-group transaction share when it exceeds
    /// it. Out-of-range values are errors.
    pub(crate) fn validate(mut self) -> Result<(PoolConfig, Vec<String>), ConfigError> {
        check("thread_pool_size", self.size, ranges::SIZE)?;
        check(
            "thread_pool_stall_limit",
            self.stall_limit,
            ranges::STALL_LIMIT,
        )?;
        check(
            "thread_pool_max_unused_threads",
            self.max_unused_threads,
            ranges::MAX_UNUSED_THREADS,
        )?;
        check(
            "thread_pool_max_active_query_threads",
            self.max_active_query_threads,
            ranges::MAX_ACTIVE_QUERY_THREADS,
        )?;
        check(
            "thread_pool_max_transactions_limit",
            self.max_transactions_limit,
            ranges::MAX_TRANSACTIONS_LIMIT,
        )?;
        check(
            "thread_pool_transaction_delay",
            self.transaction_delay,
            ranges::TRANSACTION_DELAY,
        )?;
        check(
            "thread_pool_query_threads_per_group",
            self.query_threads_per_group,
            ranges::QUERY_THREADS_PER_GROUP,
        )?;
        check_report_interval(self.connection_report_interval)?;
        check(
            "thread_pool_longrun_trx_limit",
            self.longrun_trx_limit,
            ranges::LONGRUN_TRX_LIMIT,
        )?;
        check(
            "thread_pool_oversubscribe",
            self.oversubscribe,
            ranges::OVERSUBSCRIBE,
        )?;
        check(
            "tpbed_thread_pool_time_slice",
            self.time_slice,
            ranges::TIME_SLICE,
        )?;
        let mut warnings = Vec::new();
        if self.dedicated_listeners && self.max_transactions_limit == 0 {
            self.dedicated_listeners = false;
            warnings.push(
                "thread_pool_dedicated_listeners is ignored (forced OFF): it needs \
                 thread_pool_max_transactions_limit > 0"
                    .to_string(),
            );
        }
        let share = group_share(self.max_transactions_limit, self.size);
        if share > 0 && self.query_threads_per_group > 1 && self.query_threads_per_group > share {
            warnings.push(format!(
                "thread_pool_query_threads_per_group lowered from {} to {}, the per-group share \
                 of thread_pool_max_transactions_limit",
                self.query_threads_per_group, share
            ));
            self.query_threads_per_group = share;
        }
        if self.algorithm == Algorithm::HighConcurrency && self.query_threads_per_group == 1 {
            warnings.push(
                "thread_pool_algorithm=1 with thread_pool_query_threads_per_group=1 behaves as \
                 the low-concurrency algorithm"
                    .to_string(),
            );
        }
        Ok((self, warnings))
    }
}

impl Default for PoolConfig {
    /// [`PoolConfig::mysql_defaults`] for this machine's CPU count.
    fn default() -> Self {
        PoolConfig::mysql_defaults(crate::placement::cpu_count())
    }
}

/// MySQL's default `thread_pool_max_transactions_limit`: MIN(32 × size, 512).
pub fn default_max_transactions_limit(size: u32) -> u32 {
    (32 * size).clamp(1, 512)
}

/// Per-group share of the transaction limit: 0 when the limit is 0, else
/// max(1, ceil(limit / size)).
pub(crate) fn group_share(limit: u32, size: u32) -> u32 {
    if limit == 0 {
        0
    } else {
        limit.div_ceil(size.max(1)).max(1)
    }
}

fn check(name: &'static str, value: u32, (min, max): (u32, u32)) -> Result<(), ConfigError> {
    if value < min || value > max {
        Err(ConfigError::OutOfRange {
            name,
            value: u64::from(value),
            min: u64::from(min),
            max: u64::from(max),
        })
    } else {
        Ok(())
    }
}

fn check_report_interval(value: u32) -> Result<(), ConfigError> {
    if value == 0 {
        Ok(())
    } else {
        check(
            "thread_pool_connection_report_interval",
            value,
            ranges::CONNECTION_REPORT_INTERVAL,
        )
    }
}

/// Why a setting was refused; the server maps each to a MySQL error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The value is outside the variable's range (the server may clamp and warn instead, as
    /// MySQL does for `SET GLOBAL`, or answer ER_WRONG_VALUE_FOR_VAR 1231).
    OutOfRange {
        /// Variable name.
        name: &'static str,
        /// Value given.
        value: u64,
        /// Smallest allowed.
        min: u64,
        /// Largest allowed.
        max: u64,
    },
    /// ER_TP_QUERY_THRS_PER_GRP_EXCEEDS_TXN_THR_LIMIT: `query_threads_per_group` > 1 and
    /// greater than the per-group transaction share.
    QueryThreadsExceedTransactionLimit {
        /// `thread_pool_query_threads_per_group` that would result.
        query_threads_per_group: u32,
        /// ceil(limit / size) that would result.
        share: u32,
    },
    /// ER_TP_CANNOT_DISABLE_MTL_WITH_DL: the limit cannot become 0 while dedicated listeners
    /// are ON.
    CannotDisableLimitWithDedicatedListeners,
    /// `tpbed_thread_pool_policy` names no registered policy.
    UnknownPolicy {
        /// The name given.
        name: String,
        /// The registered names.
        known: Vec<&'static str>,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::OutOfRange {
                name,
                value,
                min,
                max,
            } => write!(f, "{name}={value} is outside {min}..={max}"),
            ConfigError::QueryThreadsExceedTransactionLimit {
                query_threads_per_group,
                share,
            } => write!(
                f,
                "thread_pool_query_threads_per_group ({query_threads_per_group}) exceeds the \
                 per-group transaction limit ({share})"
            ),
            ConfigError::CannotDisableLimitWithDedicatedListeners => write!(
                f,
                "thread_pool_max_transactions_limit cannot be 0 while \
                 thread_pool_dedicated_listeners is ON"
            ),
            ConfigError::UnknownPolicy { name, known } => write!(
                f,
                "tpbed_thread_pool_policy: unknown policy '{name}'; the registered policies are: \
                 {}",
                known.join(", ")
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

/// The dynamic knobs of a running pool, shared by the scheduler (reads) and the server's
/// `SET GLOBAL` (validated writes). Every read is `Relaxed`: a knob change takes effect at the
/// scheduler's next decision, as in MySQL, and no other memory is published through it.
#[derive(Debug)]
pub struct PoolKnobs {
    size: u32,
    dedicated_listeners: bool,
    stall_limit: AtomicU32,
    prio_kickup_timer: AtomicU32,
    max_unused_threads: AtomicU32,
    max_active_query_threads: AtomicU32,
    max_transactions_limit: AtomicU32,
    transaction_delay: AtomicU32,
    query_threads_per_group: AtomicU32,
    connection_report_interval: AtomicU32,
    longrun_trx_limit: AtomicU32,
    oversubscribe: AtomicU32,
    time_slice: AtomicU32,
    /// Serialises the two setters whose check reads both values.
    pair: std::sync::Mutex<()>,
}

macro_rules! getter {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        pub fn $name(&self) -> u32 {
            self.$name.load(Ordering::Relaxed)
        }
    };
}

macro_rules! simple_setter {
    ($(#[$m:meta])* $fn:ident, $field:ident, $var:literal, $range:expr) => {
        $(#[$m])*
        pub fn $fn(&self, value: u32) -> Result<(), ConfigError> {
            check($var, value, $range)?;
            self.$field.store(value, Ordering::Relaxed);
            Ok(())
        }
    };
}

impl PoolKnobs {
    /// Knobs seeded from a validated configuration.
    pub(crate) fn new(c: &PoolConfig) -> PoolKnobs {
        PoolKnobs {
            size: c.size,
            dedicated_listeners: c.dedicated_listeners,
            stall_limit: AtomicU32::new(c.stall_limit),
            prio_kickup_timer: AtomicU32::new(c.prio_kickup_timer),
            max_unused_threads: AtomicU32::new(c.max_unused_threads),
            max_active_query_threads: AtomicU32::new(c.max_active_query_threads),
            max_transactions_limit: AtomicU32::new(c.max_transactions_limit),
            transaction_delay: AtomicU32::new(c.transaction_delay),
            query_threads_per_group: AtomicU32::new(c.query_threads_per_group),
            connection_report_interval: AtomicU32::new(c.connection_report_interval),
            longrun_trx_limit: AtomicU32::new(c.longrun_trx_limit),
            oversubscribe: AtomicU32::new(c.oversubscribe),
            time_slice: AtomicU32::new(c.time_slice),
            pair: std::sync::Mutex::new(()),
        }
    }

    getter!(
        /// `thread_pool_stall_limit` (10 ms units).
        stall_limit
    );
    getter!(
        /// `thread_pool_prio_kickup_timer` (ms).
        prio_kickup_timer
    );
    getter!(
        /// `thread_pool_max_unused_threads`.
        max_unused_threads
    );
    getter!(
        /// `thread_pool_max_active_query_threads`.
        max_active_query_threads
    );
    getter!(
        /// `thread_pool_max_transactions_limit`.
        max_transactions_limit
    );
    getter!(
        /// `thread_pool_transaction_delay` (ms).
        transaction_delay
    );
    getter!(
        /// `thread_pool_query_threads_per_group`.
        query_threads_per_group
    );
    getter!(
        /// `thread_pool_connection_report_interval` (s).
        connection_report_interval
    );
    getter!(
        /// `thread_pool_longrun_trx_limit` (ms).
        longrun_trx_limit
    );

    getter!(
        /// MariaDB's `thread_pool_oversubscribe`.
        oversubscribe
    );
    getter!(
        /// `tpbed_thread_pool_time_slice` (ms).
        time_slice
    );

    /// The per-group transaction share of a normal group, ceil(limit / size), 0 = no limit.
    pub(crate) fn group_share(&self) -> u32 {
        group_share(self.max_transactions_limit(), self.size)
    }

    simple_setter!(
        /// `SET GLOBAL thread_pool_stall_limit`.
        set_stall_limit, stall_limit, "thread_pool_stall_limit", ranges::STALL_LIMIT
    );
    simple_setter!(
        /// `SET GLOBAL thread_pool_prio_kickup_timer`.
        set_prio_kickup_timer, prio_kickup_timer, "thread_pool_prio_kickup_timer",
        ranges::PRIO_KICKUP_TIMER
    );
    simple_setter!(
        /// `SET GLOBAL thread_pool_max_unused_threads`.
        set_max_unused_threads, max_unused_threads, "thread_pool_max_unused_threads",
        ranges::MAX_UNUSED_THREADS
    );
    simple_setter!(
        /// `SET GLOBAL thread_pool_max_active_query_threads`.
        set_max_active_query_threads, max_active_query_threads,
        "thread_pool_max_active_query_threads", ranges::MAX_ACTIVE_QUERY_THREADS
    );
    simple_setter!(
        /// `SET GLOBAL thread_pool_transaction_delay`.
        set_transaction_delay, transaction_delay, "thread_pool_transaction_delay",
        ranges::TRANSACTION_DELAY
    );
    simple_setter!(
        /// `SET GLOBAL thread_pool_longrun_trx_limit`.
        set_longrun_trx_limit, longrun_trx_limit, "thread_pool_longrun_trx_limit",
        ranges::LONGRUN_TRX_LIMIT
    );

    simple_setter!(
        /// `SET GLOBAL thread_pool_oversubscribe` (MariaDB's).
        set_oversubscribe, oversubscribe, "thread_pool_oversubscribe", ranges::OVERSUBSCRIBE
    );
    simple_setter!(
        /// `SET GLOBAL tpbed_thread_pool_time_slice`.
        set_time_slice, time_slice, "tpbed_thread_pool_time_slice", ranges::TIME_SLICE
    );

    /// `SET GLOBAL thread_pool_connection_report_interval` (0 or 60..=600).
    pub fn set_connection_report_interval(&self, value: u32) -> Result<(), ConfigError> {
        check_report_interval(value)?;
        self.connection_report_interval
            .store(value, Ordering::Relaxed);
        Ok(())
    }

    /// `SET GLOBAL thread_pool_max_transactions_limit`: refused when it would be 0 with
    /// dedicated listeners ON, or when `query_threads_per_group` > 1 would exceed the new share.
    pub fn set_max_transactions_limit(&self, value: u32) -> Result<(), ConfigError> {
        check(
            "thread_pool_max_transactions_limit",
            value,
            ranges::MAX_TRANSACTIONS_LIMIT,
        )?;
        let _pair = self.pair.lock().unwrap_or_else(|e| e.into_inner());
        if value == 0 && self.dedicated_listeners {
            return Err(ConfigError::CannotDisableLimitWithDedicatedListeners);
        }
        check_pair(
            self.query_threads_per_group(),
            group_share(value, self.size),
        )?;
        self.max_transactions_limit.store(value, Ordering::Relaxed);
        Ok(())
    }

    /// `SET GLOBAL thread_pool_query_threads_per_group`: refused when > 1 and above the
    /// per-group transaction share.
    pub fn set_query_threads_per_group(&self, value: u32) -> Result<(), ConfigError> {
        check(
            "thread_pool_query_threads_per_group",
            value,
            ranges::QUERY_THREADS_PER_GROUP,
        )?;
        let _pair = self.pair.lock().unwrap_or_else(|e| e.into_inner());
        check_pair(value, self.group_share())?;
        self.query_threads_per_group.store(value, Ordering::Relaxed);
        Ok(())
    }
}

fn check_pair(qtpg: u32, share: u32) -> Result<(), ConfigError> {
    if share > 0 && qtpg > 1 && qtpg > share {
        Err(ConfigError::QueryThreadsExceedTransactionLimit {
            query_threads_per_group: qtpg,
            share,
        })
    } else {
        Ok(())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_mysql() {
        let c = PoolConfig::mysql_defaults(2);
        assert_eq!(c.size, 1);
        assert_eq!(c.max_transactions_limit, 32);
        assert_eq!(PoolConfig::mysql_defaults(64).size, 16);
        assert_eq!(PoolConfig::mysql_defaults(64).max_transactions_limit, 512);
        assert_eq!(c.stall_limit, 6);
        assert_eq!(c.query_threads_per_group, 2);
    }

    #[test]
    fn startup_forces_dedicated_listeners_off_without_limit() {
        let mut c = PoolConfig::mysql_defaults(4);
        c.max_transactions_limit = 0;
        c.dedicated_listeners = true;
        let (c, w) = c.validate().unwrap();
        assert!(!c.dedicated_listeners);
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn setters_refuse_what_mysql_refuses() {
        let mut c = PoolConfig::mysql_defaults(4);
        c.dedicated_listeners = true;
        let k = PoolKnobs::new(&c.validate().unwrap().0);
        assert_eq!(
            k.set_max_transactions_limit(0),
            Err(ConfigError::CannotDisableLimitWithDedicatedListeners)
        );
        // size 2, qtpg 2: a limit of 2 gives share 1 < qtpg.
        assert!(matches!(
            k.set_max_transactions_limit(2),
            Err(ConfigError::QueryThreadsExceedTransactionLimit { .. })
        ));
        assert!(k.set_max_transactions_limit(4).is_ok());
        assert_eq!(k.group_share(), 2);
        assert!(k.set_query_threads_per_group(3).is_err());
        assert!(k.set_stall_limit(3).is_err());
        assert!(k.set_connection_report_interval(0).is_ok());
        assert!(k.set_connection_report_interval(30).is_err());
    }

    #[test]
    fn share_is_ceiling() {
        assert_eq!(group_share(0, 4), 0);
        assert_eq!(group_share(1, 4), 1);
        assert_eq!(group_share(5, 4), 2);
        assert_eq!(group_share(512, 16), 32);
    }

    #[test]
    fn rails_parse_and_print_in_the_variable_order() {
        assert_eq!(Rails::parse("open_transaction,admin"), Some(Rails::ALL));
        assert_eq!(Rails::parse(" ADMIN , open_transaction"), Some(Rails::ALL));
        assert_eq!(Rails::parse(""), Some(Rails::NONE));
        assert_eq!(Rails::parse("admin,lock_holder"), None);
        let admin_only = Rails::parse("admin").unwrap();
        assert_eq!(
            (admin_only.open_transaction, admin_only.admin),
            (false, true)
        );
        assert_eq!(admin_only.value(), "admin");
        assert_eq!(Rails::ALL.value(), "open_transaction,admin");
        assert_eq!(Rails::NONE.value(), "");
    }
}
