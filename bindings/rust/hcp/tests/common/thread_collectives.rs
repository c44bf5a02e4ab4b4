//! hcp::Collectives written here over threads (mailboxes per pair of members, a barrier, split rounds), as a
//! trainer's own collectives would be: what the CallbackComm tests run CP contexts on.

use hcp::Collectives;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Default)]
struct Shared {
    boxes: HashMap<(i32, i32), VecDeque<Vec<u8>>>,
    aborted: Option<String>,
    arrived: usize,
    generation: u64,
    // Split rounds: each member's (color, key), and the groups made once all have arrived.
    splits: HashMap<u64, (HashMap<i32, (i32, i32)>, Option<HashMap<i32, (Arc<Group>, Vec<i32>)>>)>,
}

/// What the members of one group share.
pub struct Group {
    size: i32,
    state: Mutex<Shared>,
    changed: Condvar,
}

impl Group {
    pub fn new(size: i32) -> Arc<Group> {
        Arc::new(Group { size, state: Mutex::new(Shared::default()), changed: Condvar::new() })
    }

    /// Waits until `ready` holds, failing when the group is aborted or after the timeout.
    fn wait<T>(&self, mut ready: impl FnMut(&mut Shared) -> Option<T>) -> Result<T, String> {
        let deadline = Instant::now() + TIMEOUT;
        let mut s = self.state.lock().unwrap();
        loop {
            if let Some(reason) = &s.aborted {
                return Err(format!("the group was aborted: {}", reason));
            }
            if let Some(v) = ready(&mut s) {
                return Ok(v);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err("timed out".to_string());
            }
            s = self.changed.wait_timeout(s, deadline - now).unwrap().0;
        }
    }
}

/// A member of a Group; `fail_on` names a method that fails on it (and on the groups split from it).
pub struct ThreadCollectives {
    group: Arc<Group>,
    rank: i32,
    fail_on: Option<&'static str>,
    rounds: Mutex<u64>,
}

impl ThreadCollectives {
    pub fn new(group: Arc<Group>, rank: i32, fail_on: Option<&'static str>) -> ThreadCollectives {
        ThreadCollectives { group, rank, fail_on, rounds: Mutex::new(0) }
    }

    fn check(&self, method: &str) -> Result<(), String> {
        if self.fail_on == Some(method) {
            return Err(format!("injected failure in {}", method));
        }
        Ok(())
    }

    fn put(&self, dst: i32, data: &[u8]) {
        let mut s = self.group.state.lock().unwrap();
        s.boxes.entry((self.rank, dst)).or_default().push_back(data.to_vec());
        self.group.changed.notify_all();
    }

    fn get(&self, src: i32) -> Result<Vec<u8>, String> {
        let me = self.rank;
        self.group.wait(|s| s.boxes.get_mut(&(src, me)).and_then(|q| q.pop_front()))
    }

    fn wait_all(&self) -> Result<(), String> {
        let generation = {
            let mut s = self.group.state.lock().unwrap();
            let g = s.generation;
            s.arrived += 1;
            if s.arrived == self.group.size as usize {
                s.arrived = 0;
                s.generation += 1;
                self.group.changed.notify_all();
            }
            g
        };
        self.group.wait(|s| if s.generation > generation { Some(()) } else { None })
    }
}

impl Collectives for ThreadCollectives {
    fn rank(&self) -> i32 {
        self.rank
    }
    fn size(&self) -> i32 {
        self.group.size
    }
    fn send_recv(&self, send: &[u8], dst: i32, recv: &mut [u8], src: i32) -> Result<(), String> {
        self.check("send_recv")?;
        self.put(dst, send);
        recv.copy_from_slice(&self.get(src)?);
        Ok(())
    }
    fn all_to_all(&self, send: &[u8], recv: &mut [u8]) -> Result<(), String> {
        self.check("all_to_all")?;
        let chunk = send.len() / self.group.size as usize;
        for j in 0..self.group.size {
            self.put(j, &send[j as usize * chunk..(j as usize + 1) * chunk]);
        }
        for j in 0..self.group.size {
            recv[j as usize * chunk..(j as usize + 1) * chunk].copy_from_slice(&self.get(j)?);
        }
        Ok(())
    }
    fn all_gather(&self, send: &[u8], recv: &mut [u8]) -> Result<(), String> {
        self.check("all_gather")?;
        for j in 0..self.group.size {
            self.put(j, send);
        }
        for j in 0..self.group.size as usize {
            recv[j * send.len()..(j + 1) * send.len()].copy_from_slice(&self.get(j as i32)?);
        }
        Ok(())
    }
    fn reduce_scatter_sum_f32(&self, send: &[f32], recv: &mut [f32]) -> Result<(), String> {
        self.check("reduce_scatter_sum_f32")?;
        let n = recv.len();
        for j in 0..self.group.size as usize {
            let block: Vec<u8> = send[j * n..(j + 1) * n].iter().flat_map(|x| x.to_ne_bytes()).collect();
            self.put(j as i32, &block);
        }
        recv.iter_mut().for_each(|x| *x = 0.0);
        for j in 0..self.group.size {
            let block = self.get(j)?; // rank order: the same bits every run
            for (i, x) in recv.iter_mut().enumerate() {
                *x += f32::from_ne_bytes([block[4 * i], block[4 * i + 1], block[4 * i + 2], block[4 * i + 3]]);
            }
        }
        Ok(())
    }
    fn barrier(&self) -> Result<(), String> {
        self.check("barrier")?;
        self.wait_all()
    }
    fn split(&self, color: i32, key: i32) -> Result<Option<Box<dyn Collectives>>, String> {
        self.check("split")?;
        let round = {
            let mut r = self.rounds.lock().unwrap();
            *r += 1;
            *r
        };
        {
            let mut s = self.group.state.lock().unwrap();
            s.splits.entry(round).or_default().0.insert(self.rank, (color, key));
        }
        self.wait_all()?;
        let mut s = self.group.state.lock().unwrap();
        let entry = s.splits.get_mut(&round).unwrap();
        if entry.1.is_none() {
            let mut groups = HashMap::new();
            for &(c, _) in entry.0.values() {
                if c < 0 || groups.contains_key(&c) {
                    continue;
                }
                let mut members: Vec<(i32, i32)> =
                    entry.0.iter().filter(|(_, &(cc, _))| cc == c).map(|(&r, &(_, k))| (k, r)).collect();
                members.sort();
                groups.insert(c, (Group::new(members.len() as i32), members.into_iter().map(|(_, r)| r).collect()));
            }
            entry.1 = Some(groups);
        }
        if color < 0 {
            return Ok(None);
        }
        let (group, order) = entry.1.as_ref().unwrap()[&color].clone();
        let rank = order.iter().position(|&r| r == self.rank).unwrap() as i32;
        Ok(Some(Box::new(ThreadCollectives::new(group, rank, self.fail_on))))
    }
    fn abort(&self, reason: &str) {
        let mut s = self.group.state.lock().unwrap();
        s.aborted = Some(if reason.is_empty() { "aborted".to_string() } else { reason.to_string() });
        self.group.changed.notify_all();
    }
}
