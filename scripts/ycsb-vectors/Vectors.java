// plumb's driver for YCSB's own classes: prints the seedless values plumb's Rust port of
// YCSB's core workload must reproduce exactly (crates/workloads/tests/ycsb_vectors.rs
// reads them from crates/workloads/tests/fixtures/ycsb-vectors.txt). Written for plumb;
// it only calls YCSB's code (through reflection where YCSB keeps things private).
//
// Output: one vector per line, space-separated, its kind first. Doubles are printed
// with Double.toString, which reads back to the same double.

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Properties;
import site.ycsb.Utils;
import site.ycsb.generator.AcknowledgedCounterGenerator;
import site.ycsb.generator.HotspotIntegerGenerator;
import site.ycsb.generator.ScrambledZipfianGenerator;
import site.ycsb.generator.SkewedLatestGenerator;
import site.ycsb.generator.ZipfianGenerator;
import site.ycsb.workloads.CoreWorkload;

public final class Vectors {
  private Vectors() {
  }

  static Object get(Object o, Class<?> c, String name) throws Exception {
    Field f = c.getDeclaredField(name);
    f.setAccessible(true);
    return f.get(o);
  }

  static void set(Object o, Class<?> c, String name, Object v) throws Exception {
    Field f = c.getDeclaredField(name);
    f.setAccessible(true);
    f.set(o, v);
  }

  /** The constants a zipfian generator holds, on one line after its label. */
  static String zipfState(ZipfianGenerator z) throws Exception {
    Class<?> c = ZipfianGenerator.class;
    return "items=" + get(z, c, "items") + " base=" + get(z, c, "base")
        + " theta=" + get(z, c, "theta") + " zeta2theta=" + get(z, c, "zeta2theta")
        + " alpha=" + get(z, c, "alpha") + " zetan=" + get(z, c, "zetan")
        + " eta=" + get(z, c, "eta") + " countforzeta=" + get(z, c, "countforzeta");
  }

  /** A zipfian whose draws are given: feeds chosen ranks to YCSB's scrambling code. */
  static final class GivenRanks extends ZipfianGenerator {
    private long next;

    GivenRanks() {
      super(0, 1, ZipfianGenerator.ZIPFIAN_CONSTANT, 1.5);
    }

    void give(long v) {
      next = v;
    }

    @Override
    public Long nextValue() {
      return next;
    }
  }

  public static void main(String[] args) throws Exception {
    // fnvhash64 over small, negative and large inputs.
    long[] big = {Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1, Integer.MAX_VALUE,
        Integer.MIN_VALUE, 1L << 31, 1L << 32, (1L << 32) - 1, 1L << 40, 10_000_000_000L,
        1_000_000_000_000_000_000L, 123_456_789_012_345L, 0x0123456789abcdefL,
        0xfedcba9876543210L, 0x00ff00ff00ff00ffL, 0x8000000000000001L};
    for (long v = 0; v <= 100; v++) {
      System.out.println("fnv " + v + " " + Utils.fnvhash64(v));
    }
    for (long v = -1; v >= -100; v--) {
      System.out.println("fnv " + v + " " + Utils.fnvhash64(v));
    }
    for (long v : big) {
      System.out.println("fnv " + v + " " + Utils.fnvhash64(v));
    }

    // Key names: keynums 0..1000, both insert orders, padding 1 and 10, then some
    // wider paddings and large keynums.
    for (int pad : new int[] {1, 10}) {
      for (boolean ordered : new boolean[] {false, true}) {
        for (long k = 0; k <= 1000; k++) {
          System.out.println("key " + k + " " + pad + " " + (ordered ? "ordered" : "hashed")
              + " " + CoreWorkload.buildKeyName(k, pad, ordered));
        }
      }
    }
    for (int pad : new int[] {0, 19, 20, 25}) {
      for (long k : new long[] {0, 7, 999_999_999L, Integer.MAX_VALUE, 10_000_000_000L}) {
        for (boolean ordered : new boolean[] {false, true}) {
          System.out.println("key " + k + " " + pad + " " + (ordered ? "ordered" : "hashed")
              + " " + CoreWorkload.buildKeyName(k, pad, ordered));
        }
      }
    }

    // zetastatic(n, theta).
    Method zetastatic = ZipfianGenerator.class.getDeclaredMethod("zetastatic", long.class,
        double.class);
    zetastatic.setAccessible(true);
    for (double theta : new double[] {0.99, 0.5, 0.8}) {
      for (long n : new long[] {1, 2, 3, 10, 100, 1000, 12_345, 1_000_000, 10_000_000}) {
        System.out.println("zetastatic " + n + " " + theta + " " + zetastatic.invoke(null, n, theta));
      }
    }

    // A zipfian's constants for a few ranges and exponents.
    long[][] ranges = {{0, 0}, {0, 1}, {0, 9}, {0, 99}, {0, 999}, {0, 12_344}, {0, 999_999},
        {1, 100}, {1, 1000}, {500, 1499}};
    for (double theta : new double[] {0.99, 0.5, 0.8}) {
      for (long[] r : ranges) {
        ZipfianGenerator z = new ZipfianGenerator(r[0], r[1], theta);
        System.out.println("zipf " + r[0] + " " + r[1] + " " + theta + " " + zipfState(z));
      }
    }

    // Growing the item count: zetan grows incrementally, eta keeps the built count.
    Method nextLong = ZipfianGenerator.class.getDeclaredMethod("nextLong", long.class);
    nextLong.setAccessible(true);
    for (long[] g : new long[][] {{1000, 2000}, {1000, 5000}, {999, 1001}, {10, 100_000}}) {
      ZipfianGenerator z = new ZipfianGenerator(g[0]);
      nextLong.invoke(z, g[1]);
      System.out.println("zipfgrow " + g[0] + " " + g[1] + " " + zipfState(z));
    }

    // The scrambled zipfian: its rank generator, then where given ranks land.
    long[][] scrambledRanges = {{0, 999}, {100, 1099}, {0, 1100}, {0, 9_999_999}, {7, 7}};
    long[] ranks = {0, 1, 2, 3, 4, 10, 99, 100, 12_345, 1_000_000, 9_999_999_999L,
        10_000_000_000L};
    for (long[] r : scrambledRanges) {
      ScrambledZipfianGenerator s = new ScrambledZipfianGenerator(r[0], r[1]);
      ZipfianGenerator inner =
          (ZipfianGenerator) get(s, ScrambledZipfianGenerator.class, "gen");
      System.out.println("scrambledgen " + r[0] + " " + r[1] + " " + zipfState(inner));
      GivenRanks given = new GivenRanks();
      set(s, ScrambledZipfianGenerator.class, "gen", given);
      for (long z : ranks) {
        given.give(z);
        System.out.println("scrambled " + r[0] + " " + r[1] + " " + z + " " + s.nextValue());
      }
    }

    // The skewed-latest generator's zipfian, built from an acknowledged counter.
    for (long start : new long[] {2, 1000, 100_000}) {
      SkewedLatestGenerator l = new SkewedLatestGenerator(new AcknowledgedCounterGenerator(start));
      ZipfianGenerator z = (ZipfianGenerator) get(l, SkewedLatestGenerator.class, "zipfian");
      System.out.println("latest " + start + " " + zipfState(z));
    }

    // Hotspot set sizes (Java's (int) truncation).
    double[][] hot = {{0, 999, 0.2, 0.8}, {0, 9, 0.25, 0.5}, {100, 1099, 0.333, 0.9},
        {0, 99_999, 0.01, 0.99}};
    for (double[] h : hot) {
      HotspotIntegerGenerator g = new HotspotIntegerGenerator((long) h[0], (long) h[1], h[2], h[3]);
      System.out.println("hotspot " + (long) h[0] + " " + (long) h[1] + " " + h[2] + " " + h[3]
          + " hot=" + get(g, HotspotIntegerGenerator.class, "hotInterval")
          + " cold=" + get(g, HotspotIntegerGenerator.class, "coldInterval"));
    }

    // The core workload's zipfian key space: sized for the inserts a run expects.
    long[][] core = {{1000, 1000, 0, -1}, {1000, 1000, 5, -1}, {1000, 100_000, 5, -1},
        {10_000, 1000, 50, -1}, {1000, 1000, 0, 500}, {5000, 20_000, 100, 1000}};
    for (long[] c : core) {
      Properties p = new Properties();
      p.setProperty("recordcount", Long.toString(c[0]));
      p.setProperty("operationcount", Long.toString(c[1]));
      String insertproportion = Double.toString(c[2] / 100.0);
      p.setProperty("insertproportion", insertproportion);
      p.setProperty("requestdistribution", "zipfian");
      if (c[3] >= 0) {
        p.setProperty("insertstart", Long.toString(c[3]));
        p.setProperty("insertcount", Long.toString(c[0] - c[3]));
      }
      CoreWorkload w = new CoreWorkload();
      w.init(p);
      Object chooser = get(w, CoreWorkload.class, "keychooser");
      Class<?> sc = ScrambledZipfianGenerator.class;
      System.out.println("corezipf " + c[0] + " " + c[1] + " " + insertproportion + " "
          + (c[3] >= 0 ? c[3] : 0) + " min=" + get(chooser, sc, "min") + " max="
          + get(chooser, sc, "max") + " itemcount=" + get(chooser, sc, "itemcount"));
    }
  }
}
