//! The unsynced data of one file: the pages written since its last fsync and the size
//! it has for its readers, kept apart from the backing file until an fsync writes them
//! there (or a cut forgets them).

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// The unit the overlay keeps: a write of one byte keeps the whole page it falls in,
/// as the page cache does.
pub const PAGE: u64 = 4096;

/// One file's pending state over its backing file.
#[derive(Debug)]
pub struct Overlay {
    /// The size readers see now (pending).
    size: u64,
    /// The backing file's length: what the last fsync left there, or what it had when
    /// the overlay was made.
    base_len: u64,
    /// Backing bytes at or past this offset were cut off by a truncate no fsync has
    /// reached yet: they read as zeros, and the next fsync truncates the backing file
    /// here before it writes the pages.
    floor: u64,
    /// Whole page images by page number, each as readers see it.
    pages: BTreeMap<u64, Box<[u8]>>,
}

impl Overlay {
    /// An overlay with nothing pending over a backing file of `base_len` bytes.
    pub fn new(base_len: u64) -> Overlay {
        Overlay {
            size: base_len,
            base_len,
            floor: u64::MAX,
            pages: BTreeMap::new(),
        }
    }

    /// The file's size as readers see it.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Whether an fsync would change nothing in the backing file.
    pub fn is_clean(&self) -> bool {
        self.pages.is_empty() && self.size == self.base_len && self.floor >= self.base_len
    }

    /// Bytes held in memory for this file.
    pub fn pending_bytes(&self) -> u64 {
        self.pages.len() as u64 * PAGE
    }

    /// Reads the backing file's bytes at `off` into `buf`, zeros where it has none (past
    /// its end or past an unsynced truncate).
    fn read_base(&self, file: &File, off: u64, buf: &mut [u8]) -> io::Result<()> {
        buf.fill(0);
        let valid = self.base_len.min(self.floor);
        if off >= valid {
            return Ok(());
        }
        let n = ((valid - off) as usize).min(buf.len());
        let mut done = 0;
        while done < n {
            match file.read_at(&mut buf[done..n], off + done as u64) {
                Ok(0) => break, // shorter than recorded: the rest reads as zeros
                Ok(k) => done += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Up to `len` bytes at `off`, as readers see them (short at the end of the file).
    pub fn read(&self, file: &File, off: u64, len: u32) -> io::Result<Vec<u8>> {
        let end = off.saturating_add(u64::from(len)).min(self.size);
        if off >= end {
            return Ok(Vec::new());
        }
        let mut out = vec![0u8; (end - off) as usize];
        let mut pos = off;
        while pos < end {
            let page = pos / PAGE;
            let in_page = (pos % PAGE) as usize;
            let n = ((PAGE - pos % PAGE).min(end - pos)) as usize;
            let dst = &mut out[(pos - off) as usize..][..n];
            match self.pages.get(&page) {
                Some(p) => dst.copy_from_slice(&p[in_page..in_page + n]),
                None => self.read_base(file, pos, dst)?,
            }
            pos += n as u64;
        }
        Ok(out)
    }

    /// The page `page` as readers see it, made from the backing file if not kept yet.
    fn page_mut(&mut self, file: &File, page: u64) -> io::Result<&mut [u8]> {
        if !self.pages.contains_key(&page) {
            let mut img = vec![0u8; PAGE as usize].into_boxed_slice();
            // Past the readers' size a page holds zeros, whatever the backing file has.
            if page * PAGE < self.size {
                self.read_base(file, page * PAGE, &mut img)?;
                let keep = (self.size - page * PAGE).min(PAGE) as usize;
                img[keep..].fill(0);
            }
            self.pages.insert(page, img);
        }
        Ok(self.pages.entry(page).or_default())
    }

    /// Keeps `data` at `off` (pending), growing the file if it ends past its size.
    pub fn write(&mut self, file: &File, off: u64, data: &[u8]) -> io::Result<()> {
        let end = off
            .checked_add(data.len() as u64)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EFBIG))?;
        let mut pos = off;
        while pos < end {
            let page = pos / PAGE;
            let in_page = (pos % PAGE) as usize;
            let n = ((PAGE - pos % PAGE).min(end - pos)) as usize;
            let src = &data[(pos - off) as usize..][..n];
            self.page_mut(file, page)?[in_page..in_page + n].copy_from_slice(src);
            pos += n as u64;
        }
        self.size = self.size.max(end);
        Ok(())
    }

    /// Zeros `len` bytes at `off` without changing the size (a hole punched).
    pub fn zero(&mut self, file: &File, off: u64, len: u64) -> io::Result<()> {
        let end = off.saturating_add(len).min(self.size);
        let mut pos = off;
        while pos < end {
            let page = pos / PAGE;
            let in_page = (pos % PAGE) as usize;
            let n = ((PAGE - pos % PAGE).min(end - pos)) as usize;
            self.page_mut(file, page)?[in_page..in_page + n].fill(0);
            pos += n as u64;
        }
        Ok(())
    }

    /// Sets the size (pending): a shrink forgets what lies past it, a growth reads as
    /// zeros.
    pub fn set_size(&mut self, size: u64) {
        if size < self.size {
            let first_gone = size.div_ceil(PAGE);
            self.pages.retain(|&p, _| p < first_gone);
            if !size.is_multiple_of(PAGE) {
                if let Some(p) = self.pages.get_mut(&(size / PAGE)) {
                    p[(size % PAGE) as usize..].fill(0);
                }
            }
            self.floor = self.floor.min(size);
        }
        self.size = size;
    }

    /// Writes what is pending to the backing file and flushes it (`fdatasync` when
    /// `data_only`, else `fsync`); afterwards nothing is pending.
    pub fn sync(&mut self, file: &File, data_only: bool) -> io::Result<()> {
        if self.floor < self.base_len {
            file.set_len(self.floor)?;
        }
        for (&page, img) in &self.pages {
            let start = page * PAGE;
            if start >= self.size {
                continue;
            }
            let n = ((self.size - start).min(PAGE)) as usize;
            file.write_all_at(&img[..n], start)?;
        }
        if file.metadata()?.len() != self.size {
            file.set_len(self.size)?;
        }
        if data_only {
            file.sync_data()?;
        } else {
            file.sync_all()?;
        }
        self.pages.clear();
        self.base_len = self.size;
        self.floor = u64::MAX;
        Ok(())
    }
}

/// The unit a device writes whole: a torn page is torn at these boundaries.
pub const SECTOR: u64 = 512;

impl Overlay {
    /// What the OS may have written of this file's pending data before the power went:
    /// each pending page is lost, written whole, or written in part (each 512-byte
    /// sector of it or not), as `rand` decides; a pending truncate or growth happened or
    /// not; a page written past the end grows the file. Nothing is flushed: the caller
    /// is about to forget the overlay.
    pub fn tear(&self, file: &File, rand: &mut dyn FnMut() -> u64) -> io::Result<()> {
        if self.floor < self.base_len && rand().is_multiple_of(2) {
            file.set_len(self.floor)?;
        }
        for (&page, img) in &self.pages {
            let start = page * PAGE;
            if start >= self.size {
                continue;
            }
            let n = (self.size - start).min(PAGE);
            let whole = match rand() % 4 {
                0 | 1 => continue, // never reached the device
                2 => true,
                _ => false,
            };
            for sector in 0..n.div_ceil(SECTOR) {
                if !whole && rand().is_multiple_of(2) {
                    continue;
                }
                let a = sector * SECTOR;
                let b = (a + SECTOR).min(n);
                file.write_all_at(&img[a as usize..b as usize], start + a)?;
            }
        }
        // A size grown without a write reaching that far (ftruncate up, fallocate).
        if self.size > file.metadata()?.len() && rand().is_multiple_of(2) {
            file.set_len(self.size)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backing(content: &[u8]) -> (tempfile::NamedTempFile, File) {
        let t = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(t.path(), content).unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(t.path())
            .unwrap();
        (t, f)
    }

    #[test]
    fn writes_are_read_back_but_reach_the_file_only_at_sync() {
        let (t, f) = backing(b"hello world");
        let mut o = Overlay::new(11);
        o.write(&f, 6, b"WORLD, and more past one page").unwrap();
        o.write(&f, 5000, b"far").unwrap();
        assert_eq!(o.size(), 5003);
        let all = o.read(&f, 0, 10_000).unwrap();
        assert_eq!(all.len(), 5003);
        assert_eq!(&all[..35], b"hello WORLD, and more past one page");
        assert!(all[35..5000].iter().all(|&b| b == 0));
        assert_eq!(&all[5000..], b"far");
        assert_eq!(std::fs::read(t.path()).unwrap(), b"hello world");
        assert!(!o.is_clean());
        o.sync(&f, true).unwrap();
        assert!(o.is_clean());
        assert_eq!(std::fs::read(t.path()).unwrap(), all);
    }

    #[test]
    fn a_truncate_hides_the_backing_bytes_past_it_until_synced() {
        let (t, f) = backing(&[7u8; 9000]);
        let mut o = Overlay::new(9000);
        o.set_size(100);
        o.set_size(6000);
        let r = o.read(&f, 0, 9000).unwrap();
        assert_eq!(r.len(), 6000);
        assert!(r[..100].iter().all(|&b| b == 7));
        assert!(r[100..].iter().all(|&b| b == 0), "old bytes came back");
        // A write into the cut-off region materialises zeros around it, not old bytes.
        o.write(&f, 4100, b"x").unwrap();
        let r = o.read(&f, 4096, 10).unwrap();
        assert_eq!(r, [0, 0, 0, 0, b'x', 0, 0, 0, 0, 0]);
        assert_eq!(std::fs::read(t.path()).unwrap().len(), 9000);
        o.sync(&f, false).unwrap();
        let b = std::fs::read(t.path()).unwrap();
        assert_eq!(b.len(), 6000);
        assert_eq!(b, o.read(&f, 0, 9000).unwrap());
    }

    #[test]
    fn a_torn_cut_leaves_each_sector_old_or_new() {
        let old = vec![b'o'; 64 * PAGE as usize];
        let (t, f) = backing(&old);
        let mut o = Overlay::new(old.len() as u64);
        o.write(&f, 0, &vec![b'n'; old.len()]).unwrap();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        o.tear(&f, &mut rand).unwrap();
        let after = std::fs::read(t.path()).unwrap();
        assert_eq!(after.len(), old.len());
        let sectors: Vec<u8> = after
            .chunks(SECTOR as usize)
            .map(|c| {
                assert!(c.iter().all(|&b| b == c[0]), "a sector is never split");
                c[0]
            })
            .collect();
        // 512 sectors, each kept or written at random: both kinds are there.
        assert!(sectors.contains(&b'o') && sectors.contains(&b'n'));
    }

    #[test]
    fn zeroing_keeps_the_size() {
        let (_t, f) = backing(&[1u8; 5000]);
        let mut o = Overlay::new(5000);
        o.zero(&f, 10, 8000).unwrap();
        let r = o.read(&f, 0, 9000).unwrap();
        assert_eq!(r.len(), 5000);
        assert!(r[..10].iter().all(|&b| b == 1));
        assert!(r[10..].iter().all(|&b| b == 0));
    }
}
