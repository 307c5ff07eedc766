//! BBR v1 (placeholder while being written).
use super::{CongestionControl, Params, TcpCc};
#[derive(Clone, Debug)]
pub struct Bbr;
impl Bbr {
    pub fn from_params(_p: &mut Params, _seed: u64) -> Result<Self, String> {
        Ok(Bbr)
    }
}
impl CongestionControl for Bbr {
    fn ssthresh(&mut self, tcp: &mut TcpCc) -> u32 {
        tcp.ssthresh
    }
}
