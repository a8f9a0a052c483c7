package io.roster.server.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;

/**
 * A real file channel that fails as a sick disk does, when told to: a full disk that takes only
 * part of a write ({@code Disk.spaceLeft}), a failed {@code fsync} ({@code Disk.failForce}), a
 * truncate that fails ({@code Disk.failTruncate}). What it does write reaches the real file, so a test reads
 * back what a crash would leave. One store's channels share one {@link Disk}.
 */
final class FailingChannel extends FileChannel {

  /** The faults of one simulated disk, shared by every channel opened on it. Not thread-safe. */
  static final class Disk implements StateStore.Channels {
    /** Bytes writes may still add; negative: unlimited. */
    long spaceLeft = -1;
    boolean failForce;
    boolean failTruncate;
    /** A file name whose writes take half of what they are given, then find no space. */
    @org.jspecify.annotations.Nullable String noSpaceFor;

    @Override
    public FileChannel open(Path file, OpenOption... options) throws IOException {
      return new FailingChannel(this, FileChannel.open(file, options), file.getFileName().toString());
    }
  }

  private final Disk disk;
  private final FileChannel real;
  private final String name;
  private boolean halfWritten;

  private FailingChannel(Disk disk, FileChannel real, String name) {
    this.disk = disk;
    this.real = real;
    this.name = name;
  }

  private ByteBuffer allowed(ByteBuffer src) throws IOException {
    if (name.equals(disk.noSpaceFor)) {
      if (halfWritten || src.remaining() < 2) {
        throw new IOException("No space left on device");
      }
      halfWritten = true;
      return src.slice(src.position(), src.remaining() / 2);
    }
    if (disk.spaceLeft < 0) {
      return src;
    }
    if (disk.spaceLeft == 0) {
      throw new IOException("No space left on device");
    }
    int n = (int) Math.min(src.remaining(), disk.spaceLeft);
    return src.slice(src.position(), n);
  }

  @SuppressWarnings("ReferenceEquality") // part is src itself, or a slice of it whose position src must follow
  private int wrote(ByteBuffer src, ByteBuffer part, int n) {
    if (part != src) {
      src.position(src.position() + n);
    }
    if (disk.spaceLeft >= 0) {
      disk.spaceLeft -= n;
    }
    return n;
  }

  @Override
  public int write(ByteBuffer src) throws IOException {
    ByteBuffer part = allowed(src);
    return wrote(src, part, real.write(part));
  }

  @Override
  public int write(ByteBuffer src, long position) throws IOException {
    ByteBuffer part = allowed(src);
    return wrote(src, part, real.write(part, position));
  }

  @Override
  public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
    long n = 0;
    for (int i = offset; i < offset + length; i++) {
      n += write(srcs[i]);
    }
    return n;
  }

  @Override
  public void force(boolean metaData) throws IOException {
    if (disk.failForce) {
      throw new IOException("Input/output error");
    }
    real.force(metaData);
  }

  @Override
  public FileChannel truncate(long size) throws IOException {
    if (disk.failTruncate) {
      throw new IOException("Input/output error");
    }
    real.truncate(size);
    return this;
  }

  @Override
  public int read(ByteBuffer dst) throws IOException {
    return real.read(dst);
  }

  @Override
  public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
    return real.read(dsts, offset, length);
  }

  @Override
  public int read(ByteBuffer dst, long position) throws IOException {
    return real.read(dst, position);
  }

  @Override
  public long position() throws IOException {
    return real.position();
  }

  @Override
  public FileChannel position(long newPosition) throws IOException {
    real.position(newPosition);
    return this;
  }

  @Override
  public long size() throws IOException {
    return real.size();
  }

  @Override
  public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
    throw new UnsupportedOperationException();
  }

  @Override
  public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
    throw new UnsupportedOperationException();
  }

  @Override
  public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
    throw new UnsupportedOperationException();
  }

  @Override
  public FileLock lock(long position, long size, boolean shared) throws IOException {
    return real.lock(position, size, shared);
  }

  @Override
  public FileLock tryLock(long position, long size, boolean shared) throws IOException {
    return real.tryLock(position, size, shared);
  }

  @Override
  protected void implCloseChannel() throws IOException {
    real.close();
  }
}
