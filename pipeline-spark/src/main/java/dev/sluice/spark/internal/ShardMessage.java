package dev.sluice.spark.internal;

import dev.sluice.io.shards.ShardInfo;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * What a task's committed attempt wrote: its shards in order, as their {@code metadata.json}
 * entries (the file names are those in the staging directory).
 */
public record ShardMessage(int partition, long taskId, String[] files, long[] rows, long[] bytes, String[] checksums)
    implements WriterCommitMessage {

  static ShardMessage of(int partition, long taskId, List<ShardInfo> infos) {
    int n = infos.size();
    String[] f = new String[n];
    long[] r = new long[n];
    long[] b = new long[n];
    String[] c = new String[n];
    for (int i = 0; i < n; i++) {
      ShardInfo s = infos.get(i);
      f[i] = s.file();
      r[i] = s.rows();
      b[i] = s.bytes();
      c[i] = s.checksum();
    }
    return new ShardMessage(partition, taskId, f, r, b, c);
  }

  List<ShardInfo> infos() {
    List<ShardInfo> out = new ArrayList<>();
    for (int i = 0; i < files.length; i++) {
      out.add(new ShardInfo(files[i], rows[i], bytes[i], checksums[i]));
    }
    return out;
  }
}
