//! linkem: user-space link emulator for the kernel backend (filled in by the kernel-backend work).
fn main() {
    eprintln!("linkem: not implemented yet");
    std::process::exit(2);
}
