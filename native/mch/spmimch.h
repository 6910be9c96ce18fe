/*
 * libspmimch: SuperPMI collection (.mch/.mc) and index (.mct) access.
 *
 * Formats: docs/mch-format.md (sections 1-4 and 6). A collection is a
 * concatenation of method-context records:
 *   'm' 'c' u32 totalLen  <totalLen bytes of packets>  '4' '2'
 * and a packet is
 *   u8 id  u32 size  <size bytes: a serialised LightWeightMap/DenseLightWeightMap>  0x42
 *
 * Rules every function follows:
 *  - Nothing is ever read outside the mapped file: every length is checked against what remains
 *    before it is used.
 *  - Every failure fills a spmimch_error: a status code, the 1-based method context number it concerns
 *    (0 when none), the byte offset in the file it concerns, and a one-line message of the form
 *    "<what>: expected <x>, found <y>" (exact texts below; the pure-Python scanner in
 *    spmi_dbg/mch/pyscan.py produces the same texts, and a test checks that they agree).
 *  - Inputs are never modified. Output files are written to a temporary file in the same directory
 *    and renamed into place, so a failed write leaves nothing behind.
 *  - Generic failures (any function that takes an err): E_ARG "null argument: expected a pointer, found NULL",
 *    E_ARG "bad flags: expected a combination of 1 and 2, found %u",
 *    E_NOMEM "out of memory: expected %llu bytes, found none".
 *
 * The C ABI below is what spmi_dbg/mch/native.py declares to cffi (ABI mode): keep the two in step.
 */
#ifndef SPMIMCH_H
#define SPMIMCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPMIMCH_API __attribute__((visibility("default")))

/* Status codes. Never renumber: Python maps them to exception classes. */
enum spmimch_status {
    SPMIMCH_OK = 0,
    SPMIMCH_E_IO = 1,        /* open/stat/mmap/read/write failed; message names the call and strerror */
    SPMIMCH_E_NOTFILE = 2,   /* path is a directory or not a regular file */
    SPMIMCH_E_EMPTY = 3,     /* collection has zero bytes */
    SPMIMCH_E_FRAMING = 4,   /* record framing: header, magic, length, end canary */
    SPMIMCH_E_PACKET = 5,    /* packet framing inside a record: header, size, packet canary */
    SPMIMCH_E_MAP = 6,       /* a packet's map does not match its size/structure */
    SPMIMCH_E_TOC = 7,       /* .mct problems */
    SPMIMCH_E_RANGE = 8,     /* a record number that is not in the collection */
    SPMIMCH_E_NOMEM = 9,
    SPMIMCH_E_ARG = 10       /* caller error (null pointer, bad flag) */
};

#define SPMIMCH_MESSAGE_MAX 256

typedef struct spmimch_error {
    int32_t code;         /* enum spmimch_status */
    uint32_t record;      /* 1-based method context number, 0 if not about a record */
    uint64_t offset;      /* byte offset in the file the error is about */
    char message[SPMIMCH_MESSAGE_MAX]; /* NUL-terminated, one line, no trailing period */
} spmimch_error;

typedef struct spmimch_record {
    uint64_t offset;      /* offset of the 'm' byte */
    uint64_t size;        /* totalLen + 8 */
} spmimch_record;

typedef struct spmimch_stats {
    uint64_t packet_count[256];  /* packets with this id, over all scanned records */
    uint64_t packet_bytes[256];  /* sum of their 'size' fields (map bytes, without the 6 bytes of framing) */
    uint64_t records;            /* records whose packets were walked */
} spmimch_stats;

/* ---------------------------------------------------------------- collection file ------------ */

typedef struct spmimch_file spmimch_file;

/*
 * Open and mmap (read-only, MAP_PRIVATE) a collection. Does not scan.
 * Errors: E_IO    "cannot open: <strerror>" / "cannot stat: <strerror>" / "cannot map: <strerror>"
 *         E_NOTFILE "not a regular file: expected a .mch/.mc collection, found a directory"
 *                   (or "... found a special file"; a FIFO is detected without blocking)
 *         E_EMPTY "empty file: expected at least one method context record"
 * On error returns NULL and fills err (record 0, offset 0).
 */
SPMIMCH_API spmimch_file* spmimch_open(const char* path, spmimch_error* err);
SPMIMCH_API void spmimch_close(spmimch_file* f);
SPMIMCH_API uint64_t spmimch_file_size(const spmimch_file* f);
/* Base of the read-only mapping (file_size bytes). Valid until spmimch_close. */
SPMIMCH_API const uint8_t* spmimch_data(const spmimch_file* f);

/* ---------------------------------------------------------------- scanning ------------------- */

/* Scan flags. */
#define SPMIMCH_SCAN_PACKETS 1u  /* walk every packet of every record (framing + map structure) */
#define SPMIMCH_SCAN_RELEASE 2u  /* drop mapped pages behind the cursor (madvise DONTNEED) so RSS stays flat */

/*
 * Resumable scan. Each call continues from where the previous one stopped and processes records
 * until at least `budget_bytes` bytes of the file have been passed (0 = no limit), then returns.
 * Records found are appended to the record table (spmimch_records). Returns:
 *    1  more to scan (call again),
 *    0  finished: the whole file is framed correctly (packet problems may still have been reported),
 *   -1  stopped at a framing error (reported as the last problem); the table holds the records
 *       before it. Further calls return -1 again without adding problems.
 *       Also returned, without stopping the scan for good, for bad flags (E_ARG) or when the record
 *       table cannot grow (E_NOMEM, record 0, offset = scan position), reported as a problem; and,
 *       with nothing reported, when f or n_problems is NULL or problems is NULL with max_problems > 0.
 *
 * Problems are written to problems[*n_problems ...] while *n_problems < max_problems (the count keeps
 * rising past max_problems so the caller knows how many there were; only the first max_problems are
 * stored). `problems` may be NULL when max_problems is 0. `stats` may be NULL; when given, packet
 * counts/bytes are accumulated for records whose packets were walked (SPMIMCH_SCAN_PACKETS): every
 * packet whose framing (header, size, canary) is good is counted, even if its map has a problem;
 * `records` counts each walked record once, even if a packet problem cut its walk short.
 *
 * Record framing (always checked; any of these stops the scan), offset = record start unless noted:
 *   E_FRAMING "truncated record header: expected 6 bytes, found %llu"
 *   E_FRAMING "bad magic: expected 'mc' (6d 63), found %02x %02x"
 *   E_FRAMING "record length %u runs past end of file: expected %llu more bytes, found %llu"
 *             (the expected count is totalLen + 2, the found count what remains after the 6 header bytes)
 *   E_FRAMING "bad end canary: expected '42' (34 32), found %02x %02x"   (offset = the canary's offset)
 *
 * Packet framing (SPMIMCH_SCAN_PACKETS; the rest of that record is skipped, the scan goes on with the
 * next record), offset = the packet's id byte unless noted:
 *   E_PACKET "truncated packet header: expected 5 bytes, found %u"
 *   E_PACKET "packet %u runs past end of record: expected %llu bytes, found %u"
 *             (expected = size + 1 for the map and its canary; found = bytes left in the payload
 *              after the 5-byte header)
 *   E_PACKET "bad canary after packet %u: expected 42, found %02x"   (offset = the canary's offset)
 *
 * Map structure (SPMIMCH_SCAN_PACKETS; the packet is still skipped by its size, the walk goes on),
 * offset = the packet's id byte. A map starts with an optional 4-byte tag: "LWM1" (keyed),
 * "DWM1" (dense), or none (legacy untagged keyed map); then u32 numItems, then, if numItems > 0,
 * u32 bufferLength, the items, and the side buffer.
 *   E_MAP "packet %u: map too short: expected at least %u bytes, found %u"
 *   E_MAP "packet %u: empty map: expected %u bytes, found %u"
 *   E_MAP "packet %u: side buffer too long: expected at most %u bytes, found %u"
 *   E_MAP "packet %u: items do not fill the map: expected a multiple of %u bytes, found %u"
 *          (the items region is what lies between bufferLength and the side buffer; the multiple is
 *           numItems)
 *   E_MAP "packet %u: items do not fill the map: expected at least %u bytes, found 0"
 *          (numItems > 0 but no item bytes: every key and value type of every era has a size >= 1)
 *   No item size is checked against a struct size: agnostic struct sizes differ between JIT-EE versions
 *   (3.1's CompileMethod item is 200 bytes, today's 220 or 216), so framing never depends on them
 *   (docs/mch-format.md 10); the decoders in spmi_dbg/mch/layouts.py tell the layouts apart.
 *   E_MAP "packet %u: side buffer chunk at +%u runs past the buffer: expected %llu bytes, found %u"
 *          (a chunk is u32 length + data; +%u is its offset inside the side buffer; expected = 4 + length
 *           or 4 when fewer than 4 bytes remain; found = bytes left in the buffer)
 */
SPMIMCH_API int spmimch_scan(spmimch_file* f, unsigned flags, uint64_t budget_bytes,
                             spmimch_stats* stats, spmimch_error* problems, uint32_t max_problems,
                             uint32_t* n_problems);

/* Forget the record table and scan state so that the next spmimch_scan starts again at offset 0
 * (e.g. a packet-level scan after a framing-only one). */
SPMIMCH_API void spmimch_scan_reset(spmimch_file* f);
/* Bytes of the file the scan has passed so far (for progress). */
SPMIMCH_API uint64_t spmimch_scan_position(const spmimch_file* f);
/* The record table built so far; pointer valid until the next spmimch_scan or spmimch_close. */
SPMIMCH_API uint32_t spmimch_record_count(const spmimch_file* f);
SPMIMCH_API const spmimch_record* spmimch_records(const spmimch_file* f);

/*
 * Check the single record that should start at `offset` (as method context `number`, used only in
 * messages) without scanning the file: header, length and end canary as above, plus packets when
 * flags has SPMIMCH_SCAN_PACKETS (first packet/map problem is returned). On success stores the
 * record size in *size (may be NULL) and returns 0; on error returns -1, fills err (record = number)
 * and leaves *size alone (call again without SPMIMCH_SCAN_PACKETS to get the size of a record whose
 * framing is good but whose packets are not).
 * An offset at or past the end of file gives
 *   E_RANGE "record offset %llu is past the end of file: expected less than %llu"
 */
SPMIMCH_API int spmimch_check_record(spmimch_file* f, uint64_t offset, uint32_t number, unsigned flags,
                                     uint64_t* size, spmimch_error* err);

/* ---------------------------------------------------------------- extraction ----------------- */

/*
 * Write the given records (byte ranges of this file; e.g. from the record table or from
 * spmimch_check_record) back to back into out_path, atomically (a temp file in the same directory named
 * ".<name>.spmi-tmp-<host>-<pid>-XXXXXX", so a later run can tell a killed run's leftover; fsync, rename;
 * mode 0644). A destination that exists and is not a regular file (a device, a FIFO, a directory) is refused:
 * E_IO "cannot write <out_path>: not a regular file". Adjacent ranges are written with one write. Ranges are validated against
 * the file size first:
 *   E_RANGE "record range %llu+%llu is past the end of file: expected at most %llu"
 *           (record 0, offset = the range's offset)
 * Write errors: E_IO "cannot write <out_path>: <strerror>" (offset 0, record 0).
 */
SPMIMCH_API int spmimch_write_records(const spmimch_file* f, const uint64_t* offsets, const uint64_t* sizes,
                                      uint32_t n, const char* out_path, spmimch_error* err);

/* ---------------------------------------------------------------- .mct index ----------------- */

#define SPMIMCH_TOC_ENTRY_SIZE 48
#define SPMIMCH_HASH_SIZE 33

typedef struct spmimch_toc spmimch_toc;

/*
 * Read and validate a .mct. `mch_size` is the size of the paired collection (offsets must point
 * inside it, with room for at least a record header: offset + 8 <= mch_size).
 * Layout: "INDX" u32 count, count x 48-byte entries {i64 offset; i32 number; char hash[33]; 3 pad},
 * "INDX". Errors (E_TOC unless noted; record = the entry's method context number when known,
 * offset = offset in the .mct):
 *   E_IO / E_NOTFILE as for spmimch_open, but "not a regular file: expected a .mct index, found ..."
 *   "missing the starting sentinel/length: expected at least 8 bytes, found %llu"      (offset 0)
 *   "missing the starting sentinel/length: expected 'INDX', found %02x %02x %02x %02x" (offset 0)
 *   "truncated: expected %llu bytes for %u entries, found %llu"      (file shorter than 8+48n+4;
 *                                                                     offset = file size)
 *   "unexpected size: expected %llu bytes for %u entries, found %llu" (file longer; offset = 8+48n+4)
 *   "missing the ending sentinel: expected 'INDX', found %02x %02x %02x %02x" (offset = 8+48n)
 * Per entry, in order (entry %u is the 0-based index i; offset = the entry's start 8+48i):
 *   "entry %u: expected a method context number >= 1, found %d"     (record 0)
 *   "not sorted: expected numbers to increase, found %d after %d"     (at the later entry)
 *   "entry %u: negative offset: expected 0 to %llu, found %lld"
 *   "entry %u: offsets out of order: expected more than %lld (entry %u's), found %lld" (records are in file
 *          order: a later method context lies further on; swapped entries would name the wrong record)
 *   "entry %u: offset past the end of the collection: expected at most %llu, found %lld"
 *          (expected = mch_size - 8, or 0 when mch_size < 8, in which case every entry fails)
 */
SPMIMCH_API spmimch_toc* spmimch_toc_open(const char* path, uint64_t mch_size, spmimch_error* err);
SPMIMCH_API void spmimch_toc_close(spmimch_toc* t);
SPMIMCH_API uint32_t spmimch_toc_count(const spmimch_toc* t);
/* Entry i (0-based): offset, number, and the hash field copied to hash[33] (NUL-terminated). */
SPMIMCH_API int spmimch_toc_entry(const spmimch_toc* t, uint32_t i, int64_t* offset, int32_t* number,
                                  char hash[SPMIMCH_HASH_SIZE]);
/* Index of the entry with this method context number (binary search), or -1. */
SPMIMCH_API int64_t spmimch_toc_find(const spmimch_toc* t, int32_t number);

/*
 * Write a .mct atomically (as spmimch_write_records: a run-named temp file, renamed; never over a device).
 * hashes is n x 33 bytes (copied as is) or NULL for all-zero hash fields.
 * Numbers must be >= 1 and strictly increasing (E_ARG "entry %u: expected a method context number >= 1,
 * found %d" / "not sorted: ..." with record and offset as for spmimch_toc_open otherwise).
 * Padding bytes are written as zero.
 */
SPMIMCH_API int spmimch_toc_write(const char* path, uint32_t n, const int64_t* offsets, const int32_t* numbers,
                                  const char* hashes, spmimch_error* err);

SPMIMCH_API const char* spmimch_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SPMIMCH_H */
