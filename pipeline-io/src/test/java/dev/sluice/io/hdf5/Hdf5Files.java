package dev.sluice.io.hdf5;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.testing.Python;
import java.nio.file.Path;

/**
 * Writes the test files with h5py and netCDF4 (one {@code /usr/bin/python3} run) and returns what
 * NumPy says about them: per file the SHA-256 of the canonical bytes, the rows, and for the bad
 * files what is wrong with them.
 */
final class Hdf5Files {
  private Hdf5Files() {}

  static final String SCRIPT = H5py.PRELUDE + """
      import netCDF4
      out = sys.argv[1]
      rng = np.random.default_rng(11)
      exp = {}
      N = 37
      codes = ['i1', 'i2', 'i4', 'i8', 'u1', 'u2', 'u4', 'u8', 'f2', 'f4', 'f8']
      def values(code, shape):
          dt = np.dtype(code)
          if dt.kind in 'iu':
              info = np.iinfo(dt)
              return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt.newbyteorder('=')).astype(dt)
          return (rng.standard_normal(shape) * 1000).astype(dt)
      cols = {}
      for c in codes:
          cols['le_' + c] = values('<' + c, (N, 3))
          if c not in ('i1', 'u1'):
              cols['be_' + c] = values('>' + c, (N, 3))
      cols['flag'] = rng.integers(0, 2, size=N).astype(bool)
      cols['name'] = np.array([('n%d' % i).encode() for i in range(N)], dtype='S8')
      text = [('v%d-\\u00e9' % i) * (i % 4) for i in range(N)]
      def dtypes(name, chunks=None, userblock=0, **kw):
          path = os.path.join(out, name)
          with h5py.File(path, 'w', userblock_size=userblock) as f:
              f.attrs['title'] = 'dtypes'
              f.attrs['version'] = 3
              f.attrs['scale'] = np.array([1.5, 2.5])
              for k, a in cols.items():
                  ch = None if chunks is None else (chunks if a.ndim == 2 else chunks[:1])
                  f.create_dataset(k, data=a, chunks=ch, **(kw if ch else {}))
              f.create_dataset('text', data=text, dtype=h5py.string_dtype())
          exp[name] = {'sha': sha({**cols, 'text': text}), 'rows': N, 'chunked': chunks is not None}
      dtypes('contiguous.h5')
      dtypes('userblock.h5', userblock=512)
      dtypes('gzip_shuffle.h5', chunks=(5, 3), compression='gzip', shuffle=True)
      dtypes('lzf.h5', chunks=(8, 3), compression='lzf')
      dtypes('fletcher.h5', chunks=(6, 2), fletcher32=True)
      dtypes('gzip_fletcher.hdf5', chunks=(4, 3), compression='gzip', compression_opts=9, shuffle=True, fletcher32=True)
      # the course's layout: x, y, edge in one file
      def features(name, **kw):
          M = 1000
          x = values('<f4', (M, 16)); y = np.arange(M, dtype='<i8'); edge = values('<i4', (M, 2))
          with h5py.File(os.path.join(out, name), 'w') as f:
              f.create_dataset('x', data=x, **kw).attrs['units'] = 'm'
              f.create_dataset('y', data=y, **({k: v for k, v in kw.items() if k != 'chunks'}))
              f.create_dataset('edge', data=edge)
              f.attrs['source'] = 'course'
          exp[name] = {'sha': sha({'x': x, 'y': y, 'edge': edge}), 'rows': M, 'chunked': bool(kw)}
      features('features.h5')
      features('features_gzip.h5', chunks=(64, 16), compression='gzip')
      # netCDF-4: an unlimited (chunked) time axis, a zlib variable, a big-endian one, a dimension without a variable
      nc = netCDF4.Dataset(os.path.join(out, 'climate.nc'), 'w')
      nc.createDimension('time', None); nc.createDimension('lat', 4); nc.createDimension('lon', 5)
      t = nc.createVariable('time', 'f8', ('time',))
      temp = nc.createVariable('temp', 'f4', ('time', 'lat', 'lon'), zlib=True)
      code = nc.createVariable('code', 'i4', ('time',), endian='big')
      lat = nc.createVariable('lat', 'f4', ('lat',))
      nc.title = 'climate'; temp.units = 'K'
      tv = np.arange(30) * 0.5; tempv = values('<f4', (30, 4, 5)); codev = values('<i4', (30,))
      t[:] = tv; temp[:] = tempv; code[:] = codev; lat[:] = np.arange(4, dtype='f4')
      nc.close()
      exp['climate.nc'] = {'sha': sha({'time': tv, 'temp': tempv, 'code': codev}), 'rows': 30, 'chunked': True,
                           'datasets': ['/time', '/temp', '/code']}
      bad = {}
      def copy_of(src, dst, edit):
          b = bytearray(open(os.path.join(out, src), 'rb').read())
          b = edit(b)
          open(os.path.join(out, dst), 'wb').write(bytes(b))
      copy_of('contiguous.h5', 'truncated.h5', lambda b: b[:len(b) // 2])
      def superblock(b):
          b[8] = 99  # superblock version
          return b
      copy_of('features.h5', 'bad_superblock.h5', superblock)
      with h5py.File(os.path.join(out, 'one_chunked.h5'), 'w') as f:
          f.create_dataset('x', data=values('<f4', (100, 4)), chunks=(10, 4), compression='gzip')
      with h5py.File(os.path.join(out, 'one_chunked.h5'), 'r') as f:
          infos = [f['x'].id.get_chunk_info(i) for i in range(f['x'].id.get_num_chunks())]
      first = min(infos, key=lambda c: c.byte_offset); last = max(infos, key=lambda c: c.byte_offset)
      def corrupt(b):
          for k in range(first.byte_offset + 2, first.byte_offset + first.size - 4):
              b[k] ^= 0x5A
          return b
      copy_of('one_chunked.h5', 'corrupt_chunk.h5', corrupt)
      copy_of('one_chunked.h5', 'chunk_past_end.h5', lambda b: b[:last.byte_offset + 3])
      with h5py.File(os.path.join(out, 'compound.h5'), 'w') as f:
          f.create_dataset('c', data=np.zeros(4, dtype=[('a', '<f4'), ('b', '<i4')]))
      with h5py.File(os.path.join(out, 'unequal.h5'), 'w') as f:
          f.create_dataset('a', data=np.arange(10)); f.create_dataset('b', data=np.arange(11))
      with open(os.path.join(out, 'ext.bin'), 'wb') as e:
          e.write(np.arange(8, dtype='<i4').tobytes())
      with h5py.File(os.path.join(out, 'external.h5'), 'w') as f:
          f.create_dataset('e', shape=(8,), dtype='<i4', external=[(os.path.join(out, 'ext.bin'), 0, 32)])
      with h5py.File(os.path.join(out, 'virtual.h5'), 'w') as f:
          f.create_dataset('src', data=np.arange(6))
          layout = h5py.VirtualLayout(shape=(6,), dtype='i8')
          layout[:] = h5py.VirtualSource(f['src'])
          f.create_virtual_dataset('v', layout)
      classic = netCDF4.Dataset(os.path.join(out, 'classic.nc'), 'w', format='NETCDF3_CLASSIC')
      classic.createDimension('t', 3); classic.createVariable('v', 'f4', ('t',))[:] = [1, 2, 3]
      classic.close()
      with h5py.File(os.path.join(out, 'fletcher_only.h5'), 'w') as f:
          f.create_dataset('x', data=values('<f4', (40, 4)), chunks=(10, 4), fletcher32=True)
      with h5py.File(os.path.join(out, 'fletcher_only.h5'), 'r') as f:
          c2 = f['x'].id.get_chunk_info(2)
      def flip(b):
          b[c2.byte_offset + 17] ^= 0x01
          return b
      copy_of('fletcher_only.h5', 'fletcher_flipped.h5', flip)
      with h5py.File(os.path.join(out, 'sparse_fill.h5'), 'w') as f:
          d = f.create_dataset('s', shape=(20, 2), dtype='<i4', chunks=(5, 2), fillvalue=7)
          d[0:5] = 1; d[10:20] = 2  # rows 5..9: a chunk never written
      with h5py.File(os.path.join(out, 'sparse_zero.h5'), 'w') as f:
          d = f.create_dataset('s', shape=(20, 2), dtype='<i4', chunks=(5, 2))
          d[0:5] = 1; d[10:20] = 2
      sz = np.zeros((20, 2), '<i4'); sz[0:5] = 1; sz[10:20] = 2
      exp['sparse_zero.h5'] = {'sha': sha({'s': sz}), 'rows': 20, 'chunked': True}
      print(json.dumps(exp))
      """;

  static JsonNode write(Path dir) throws Exception {
    H5py.require();
    return new ObjectMapper().readTree(Python.run(SCRIPT, dir.toString()));
  }
}
