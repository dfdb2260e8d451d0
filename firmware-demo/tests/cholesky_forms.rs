#![no_std]
#![no_main]
use cortex_m_rt::entry;
#[entry]
fn main() -> ! {
    kestrel_firmware_demo::Tests::default().finish()
}
