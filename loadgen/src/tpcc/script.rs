//! One TPC-C terminal as a connection's script: each event is one transaction of the mix, with
//! no think or keying time. An error in `--mysql-ignore-errors` (by default deadlock 1213, lock
//! wait timeout 1205, 1020) rolls the transaction back and runs it again with the same input;
//! the retry belongs to the same transaction, whose latency, rollbacks, lock waits and
//! deadlocks are recorded per type once it completes inside the measured window.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::conn::Reply;
use crate::metrics::{TxnOutcome, TxnRecorder};
use crate::options::IgnoreList;
use crate::script::{Op, Script, Step};
use crate::tpcc::keys::{Input, Keys, TYPES};
use crate::tpcc::txn::{Next, Txn};

/// A terminal.
#[derive(Debug)]
pub(crate) struct Terminal {
    keys: Keys,
    ignore: IgnoreList,
    setup: Vec<String>,
    rec: Arc<Mutex<TxnRecorder>>,
    input: Option<Input>,
    txn: Option<Txn>,
    /// The next `begin_event` runs `input` again (after a rollback on an ignored error).
    retry: bool,
    /// The statement in flight is the ROLLBACK before a retry.
    rolling_back: bool,
    started: Instant,
    outcome: TxnOutcome,
    /// The transaction just completed, recorded when the engine says it was measured.
    done: Option<(usize, TxnOutcome)>,
}

impl Terminal {
    /// A terminal drawing its transactions from `keys`; `setup` runs once after connecting.
    pub(crate) fn new(
        keys: Keys,
        ignore: IgnoreList,
        setup: Vec<String>,
        rec: Arc<Mutex<TxnRecorder>>,
    ) -> Terminal {
        Terminal {
            keys,
            ignore,
            setup,
            rec,
            input: None,
            txn: None,
            retry: false,
            rolling_back: false,
            started: Instant::now(),
            outcome: TxnOutcome::default(),
            done: None,
        }
    }

    fn kind_name(&self) -> &'static str {
        self.input
            .as_ref()
            .map_or("tpcc", |i| TYPES[i.kind() as usize])
    }
}

impl Script for Terminal {
    fn setup(&self) -> Vec<String> {
        self.setup.clone()
    }

    fn wants_rows(&self) -> bool {
        true
    }

    fn begin_event(&mut self) {
        if !self.retry || self.input.is_none() {
            self.input = Some(self.keys.next_input());
            self.started = Instant::now();
            self.outcome = TxnOutcome::default();
        }
        self.retry = false;
        self.rolling_back = false;
        self.txn = self.input.as_ref().map(Txn::start);
    }

    fn next(&mut self, last: Option<&Reply>) -> Step {
        if self.rolling_back {
            if let Some(Reply::Error { code, message }) = last {
                return Step::Fatal(format!("ROLLBACK failed: {code}: {message}"));
            }
            self.retry = true;
            return Step::Restart;
        }
        if let Some(Reply::Error { code, message }) = last {
            if !self.ignore.contains(*code) {
                return Step::Fatal(format!("{}: error {code}: {message}", self.kind_name()));
            }
            self.outcome.rollbacks += 1;
            self.outcome.lock_waits += u64::from(*code == 1205);
            self.outcome.deadlocks += u64::from(*code == 1213);
            self.rolling_back = true;
            return Step::Send(Op::Query("ROLLBACK".into()));
        }
        let Some(txn) = self.txn.as_mut() else {
            return Step::Fatal("no transaction started".into());
        };
        match txn.next(last) {
            Ok(Next::Send(sql)) => Step::Send(Op::Query(sql)),
            Ok(Next::Done { rolled_back }) => {
                self.outcome.rollbacks += u64::from(rolled_back);
                self.outcome.ns = self.started.elapsed().as_nanos() as u64;
                let kind = self.input.as_ref().map_or(0, |i| i.kind() as usize);
                self.done = Some((kind, self.outcome));
                Step::EndEvent
            }
            Err(e) => Step::Fatal(format!("{}: {e}", self.kind_name())),
        }
    }

    fn end_event(&mut self, measured: bool) {
        if let Some((kind, outcome)) = self.done.take() {
            if measured {
                self.rec
                    .lock()
                    .expect("tpcc recorder")
                    .record(kind, outcome);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tpcc::Scale;

    fn terminal(rec: &Arc<Mutex<TxnRecorder>>) -> Terminal {
        let scale = Scale {
            warehouses: 1,
            items: 1000,
            customers: 100,
        };
        Terminal::new(
            Keys::new(scale, 1, 1),
            IgnoreList::Codes(vec![1205, 1213]),
            Vec::new(),
            rec.clone(),
        )
    }

    fn ok() -> Reply {
        Reply::Ok {
            affected: 1,
            last_insert_id: 0,
        }
    }

    #[test]
    fn a_deadlock_rolls_back_and_retries_the_same_transaction() {
        let rec = Arc::new(Mutex::new(TxnRecorder::new(TYPES)));
        let mut t = terminal(&rec);
        t.begin_event();
        let input = t.input.clone();
        assert_eq!(t.next(None), Step::Send(Op::Query("BEGIN".into())));
        let dead = Reply::Error {
            code: 1213,
            message: "Deadlock found".into(),
        };
        assert_eq!(
            t.next(Some(&dead)),
            Step::Send(Op::Query("ROLLBACK".into()))
        );
        assert_eq!(t.next(Some(&ok())), Step::Restart);
        t.begin_event();
        assert_eq!(t.input, input, "the retry runs the same input");
        assert_eq!(t.next(None), Step::Send(Op::Query("BEGIN".into())));
        let wait = Reply::Error {
            code: 1205,
            message: "Lock wait timeout exceeded".into(),
        };
        assert_eq!(
            t.next(Some(&wait)),
            Step::Send(Op::Query("ROLLBACK".into()))
        );
        assert_eq!(t.next(Some(&ok())), Step::Restart);
        t.begin_event();
        assert_eq!(
            (
                t.outcome.rollbacks,
                t.outcome.deadlocks,
                t.outcome.lock_waits
            ),
            (2, 1, 1)
        );
        let other = Reply::Error {
            code: 1146,
            message: "Table 'sbtest.item1' doesn't exist".into(),
        };
        let _ = t.next(None);
        assert!(matches!(t.next(Some(&other)), Step::Fatal(m) if m.contains("1146")));
    }

    #[test]
    fn a_completed_transaction_is_recorded_only_when_measured() {
        let rec = Arc::new(Mutex::new(TxnRecorder::new(TYPES)));
        let mut t = terminal(&rec);
        // Stock-Level is four statements; draw inputs until one comes up
        let mut recorded = 0;
        for round in 0..200 {
            t.begin_event();
            if t.input.as_ref().map(Input::kind) != Some(crate::tpcc::keys::Kind::StockLevel) {
                continue;
            }
            let district = Reply::Rows {
                count: 1,
                rows: vec![vec![Some("3001".into())]],
            };
            let count = Reply::Rows {
                count: 1,
                rows: vec![vec![Some("7".into())]],
            };
            assert!(matches!(t.next(None), Step::Send(_)));
            assert!(matches!(t.next(Some(&ok())), Step::Send(_)));
            assert!(matches!(t.next(Some(&district)), Step::Send(_)));
            assert_eq!(t.next(Some(&count)), Step::Send(Op::Query("COMMIT".into())));
            assert_eq!(t.next(Some(&ok())), Step::EndEvent);
            let measured = round % 2 == 0;
            t.end_event(measured);
            recorded += u64::from(measured);
        }
        let m = rec.lock().unwrap().metrics(95.0);
        assert!(recorded > 0);
        assert_eq!(m[4].name, "stock_level");
        assert_eq!(m[4].count, recorded);
        assert!(m[..4].iter().all(|t| t.count == 0));
    }
}
