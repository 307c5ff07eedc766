//! TCP modelled on Linux: the sender (loss detection and recovery, RTT/RTO, pacing,
//! delivery-rate estimation; congestion control through `crate::cc`) and the receiver
//! (in-order delivery, SACK, delayed ACKs).

pub mod rate;
pub mod receiver;
pub mod rtt;
pub mod sender;

pub use receiver::Receiver;
pub use sender::{Io, Sender, SenderParams};
