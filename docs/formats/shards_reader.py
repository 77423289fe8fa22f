"""Reads a Sluice shard set (format version 1, specified in shards.md) with numpy alone.

read(path) returns {field name: [row, ...]} in row order: a row is None (null), an ndarray (a
fixed-length or list field) or bytes (a string or bytes field). check=True also checks every block.
"""
import json, os, struct
import numpy as np

DTYPES = {'bool': '?', 'int8': 'i1', 'int16': '<i2', 'int32': '<i4', 'int64': '<i8', 'uint8': 'u1',
          'uint16': '<u2', 'uint32': '<u4', 'uint64': '<u8', 'float16': '<f2', 'bfloat16': '<V2',
          'float32': '<f4', 'float64': '<f8', 'complex64': '<c8', 'complex128': '<c16'}
TABLE = []
for i in range(256):
    for _ in range(8):
        i = (i >> 1) ^ (0x82F63B78 if i & 1 else 0)
    TABLE.append(i)

def crc32c(data):  # CRC-32C (Castagnoli), as java.util.zip.CRC32C
    crc = 0xFFFFFFFF
    for b in bytes(data):
        crc = TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF

def read_shard(path, info, fields, check=False):
    m = np.fromfile(path, dtype=np.uint8)
    magic, version, nblocks, rows, footer, length = struct.unpack_from('<8sIIQQQ', m, 0)
    assert magic == b'SLUICESH' and version == 1 and crc32c(m[:60]) == struct.unpack_from('<I', m, 60)[0]
    assert length == len(m) == info['bytes'] and rows == info['rows'], path + ': truncated, extended or not ours'
    checksum = crc32c(m[footer:length - 8])
    assert bytes(m[-4:]) == b'SHRD' and struct.unpack_from('<I', m, length - 8)[0] == checksum
    assert info['checksum'] == 'crc32c:%08x' % checksum, path + ': checksum mismatch'
    blocks = iter([struct.unpack_from('<QQI', m, footer + 24 * i) for i in range(nblocks)])
    def block(dtype):
        offset, size, crc = next(blocks)
        assert not check or crc32c(m[offset:offset + size]) == crc, path + ': block checksum mismatch'
        return m[offset:offset + size].view(dtype)
    out = {}
    for f in fields:
        valid = block('?') if f['nullable'] else np.ones(rows, '?')
        shape, binary = f['shape'], f['dtype'] in ('string', 'bytes')
        if not binary and -1 not in shape:  # fixed-length: row r is values[r]
            values = block(DTYPES[f['dtype']]).reshape([rows] + shape)
            out[f['name']] = [values[r] if valid[r] else None for r in range(rows)]
            continue
        offsets = block('<i8')  # rows + 1 offsets, in bytes or in list items
        values = block('u1') if binary else block(DTYPES[f['dtype']]).reshape([-1] + shape[1:])
        cut = lambda r: values[offsets[r]:offsets[r + 1]]
        out[f['name']] = [None if not valid[r] else bytes(cut(r)) if binary else cut(r) for r in range(rows)]
    return out

def read(path, check=False):
    meta = json.load(open(os.path.join(path, 'metadata.json')))
    assert meta['format'] == 'sluice-shards' and meta['version'] == 1
    columns = {f['name']: [] for f in meta['fields']}
    for info in meta['shards']:
        for name, rows in read_shard(os.path.join(path, info['file']), info, meta['fields'], check).items():
            columns[name] += rows
    return columns
