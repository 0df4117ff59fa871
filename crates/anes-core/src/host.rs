//! What a host program (an emulator frontend, a cheat engine, an achievement system) needs from a
//! console besides running frames: the work RAM and battery RAM to read and poke, and Game Genie
//! codes. Everything changed here is machine state or machine identity, so the state hash and
//! snapshots see it.

use crate::cart::{GameGenieCode, GameGenieError};
use crate::nes::Nes;

impl Nes {
    /// The console's 2 KiB of work RAM ($0000-$07FF, mirrored to $1FFF).
    pub fn ram(&self) -> &[u8; 0x800] {
        &self.ram
    }

    /// The work RAM, to poke between frames (cheat engines, achievement tools, debuggers). A poke is
    /// a change of machine state like any other: the state hash and snapshots see it.
    ///
    /// ```
    /// # let mut rom = vec![b'N', b'E', b'S', 0x1A, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    /// # let mut prg = vec![0xEA; 0x4000]; // NOPs
    /// # prg[..3].copy_from_slice(&[0x4C, 0x00, 0x80]); // JMP $8000
    /// # prg[0x3FFC..].copy_from_slice(&[0x00, 0x80, 0x00, 0x80]);
    /// # rom.extend(prg);
    /// # rom.extend(vec![0x55; 0x2000]);
    /// let mut nes = anes_core::Nes::new(anes_core::Cartridge::from_ines(&rom)?, Default::default());
    /// let before = nes.state_hash();
    /// nes.ram_mut()[0x42] = 7;
    /// assert_eq!(nes.peek(0x0842), 7); // mirrored
    /// assert_ne!(nes.state_hash(), before);
    /// # Ok::<(), anes_core::RomError>(())
    /// ```
    pub fn ram_mut(&mut self) -> &mut [u8; 0x800] {
        // The caller writes behind the sync digest's back: recompute it before trusting it again.
        self.digest.stale = true;
        &mut self.ram
    }

    /// The battery-backed part of the cartridge's PRG RAM, writable (a frontend loading a save file
    /// into it in place); `None` without a battery. See [`Nes::load_battery_ram`].
    pub fn battery_ram_mut(&mut self) -> Option<&mut [u8]> {
        self.digest.stale = true;
        self.cart.battery_ram_mut()
    }

    /// Plugs in these Game Genie codes, replacing any before (an empty slice unplugs the device); on
    /// error nothing changes. The codes become part of the machine's identity
    /// ([`Nes::rom_identity`]): the state hash changes with them, and snapshots taken with other
    /// codes are refused, so two machines can never silently disagree about them.
    ///
    /// ```
    /// # let mut rom = vec![b'N', b'E', b'S', 0x1A, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    /// # let mut prg = vec![0xEA; 0x4000]; // NOPs
    /// # prg[..3].copy_from_slice(&[0x4C, 0x00, 0x80]); // JMP $8000
    /// # prg[0x3FFC..].copy_from_slice(&[0x00, 0x80, 0x00, 0x80]);
    /// # rom.extend(prg);
    /// # rom.extend(vec![0x55; 0x2000]);
    /// use anes_core::cart::GameGenieCode;
    /// let mut nes = anes_core::Nes::new(anes_core::Cartridge::from_ines(&rom)?, Default::default());
    /// let plain = *nes.rom_identity();
    /// let original = nes.peek(0x8010);
    /// // Replace whatever is at $8003 with $EA, only where the cartridge drives `original` there.
    /// let code = GameGenieCode { address: 0x8010, value: 0xEA, compare: Some(original) };
    /// nes.set_game_genie_codes(&[code]).unwrap();
    /// assert_eq!(nes.peek(0x8010), 0xEA);
    /// assert_ne!(*nes.rom_identity(), plain);
    /// nes.set_game_genie_codes(&[]).unwrap();
    /// assert_eq!((nes.peek(0x8010), *nes.rom_identity()), (original, plain));
    /// # Ok::<(), anes_core::RomError>(())
    /// ```
    pub fn set_game_genie_codes(&mut self, codes: &[GameGenieCode]) -> Result<(), GameGenieError> {
        self.cart.set_game_genie_codes(codes)?;
        self.rom_identity = self.cart.machine_identity();
        self.refresh_digest();
        Ok(())
    }

    /// The Game Genie codes plugged in, in the order given.
    pub fn game_genie_codes(&self) -> impl Iterator<Item = &GameGenieCode> {
        self.cart.game_genie_codes()
    }
}
