package lmspark.fuzz

import java.nio.file.{Files, Path}

import scala.util.Random

import org.apache.parquet.hadoop.metadata.CompressionCodecName._

import lmspark.io.CodecFixtures
import lmspark.testutil.{EncMode, FileConfig, LogicalFiles, Nulls, TestColumn, TestFileWriter, TestTypes}

/**
 * The valid files the fuzz test mutates: small deterministic files written with parquet-java's
 * column writers ([[TestFileWriter]]) covering every value encoding lmspark reads (PLAIN,
 * PLAIN_DICTIONARY / RLE_DICTIONARY with and without fallback, DELTA_BINARY_PACKED,
 * DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT, RLE booleans), every codec it can
 * write (UNCOMPRESSED, SNAPPY, GZIP, ZSTD, LZ4_RAW), data pages v1 and v2, nulls, three row groups
 * of several pages per column and page indexes; two [[LogicalFiles]] files (every logical type,
 * INT96, unsigned integers; one with bloom filters); and real files of the parquet-testing corpus
 * (hadoop LZ4, raw LZ4, concatenated GZIP members, corpus DELTA and BYTE_STREAM_SPLIT files,
 * decimals, null pages, checksums) when the corpus is present.
 */
object FuzzSeeds {

  /** Flat corpus files lmspark reads itself (no nesting, no encryption) and a reference reads too
    * (not non_hadoop_lz4_compressed: both references fail on it, so its mutants could not be judged;
    * not byte_stream_split_extended: Spark infers no schema for its FLOAT16 columns). */
  val corpusNames: Seq[String] = Seq(
    "alltypes_plain.parquet", "alltypes_dictionary.parquet", "alltypes_plain.snappy.parquet",
    "delta_binary_packed.parquet", "delta_length_byte_array.parquet", "delta_byte_array.parquet",
    "byte_stream_split.zstd.parquet", "rle_boolean_encoding.parquet",
    "hadoop_lz4_compressed.parquet", "lz4_raw_compressed.parquet",
    "concatenated_gzip_members.parquet", "int32_with_null_pages.parquet", "fixed_length_decimal.parquet",
    "int64_decimal.parquet", "int32_decimal.parquet", "byte_array_decimal.parquet",
    "data_index_bloom_encoding_stats.parquet", "rle-dict-snappy-checksum.parquet",
    "delta_encoding_optional_column.parquet",
    // Nested: lists, maps, structs, legacy layouts.
    "nested_lists.snappy.parquet", "nested_maps.snappy.parquet", "nested_structs.rust.parquet",
    "repeated_no_annotation.parquet", "old_list_structure.parquet", "null_list.parquet", "list_columns.parquet",
    "nonnullable.impala.parquet", "nullable.impala.parquet")

  private val configs: Seq[FileConfig] = Seq(
    FileConfig(UNCOMPRESSED, v2 = false, EncMode.Plain),
    FileConfig(SNAPPY, v2 = true, EncMode.Dict),
    FileConfig(GZIP, v2 = false, EncMode.Fallback),
    FileConfig(ZSTD, v2 = true, EncMode.Delta),
    FileConfig(LZ4_RAW, v2 = false, EncMode.Bss),
    FileConfig(SNAPPY, v2 = true, EncMode.DictDelta),
    FileConfig(ZSTD, v2 = false, EncMode.Dict),
    FileConfig(LZ4_RAW, v2 = true, EncMode.Plain),
    FileConfig(GZIP, v2 = true, EncMode.Bss),
    FileConfig(UNCOMPRESSED, v2 = true, EncMode.Fallback),
    FileConfig(SNAPPY, v2 = false, EncMode.Delta))

  private val typeNames = Seq("bool", "int32", "int64", "float", "double", "string", "binary", "flba5", "dec_i32",
    "dec_i64", "dec_flba6", "dec_bin", "date", "ts_micros", "ts_millis", "int16")

  private val rowGroups = IndexedSeq(400, 300, 213)

  /** Seeded values: low-cardinality for dictionary modes (all rows for Dict, the first 40% when
    * falling back), fresh values otherwise; about one row in five null in optional columns. */
  private def values(spec: lmspark.testutil.TypeSpec, nulls: Nulls, mode: EncMode, seed: Long): IndexedSeq[IndexedSeq[Any]] = {
    val r = new Random(seed)
    val pool = IndexedSeq.fill(6)(spec.gen(r))
    val total = rowGroups.sum
    var row = 0
    rowGroups.map { n =>
      IndexedSeq.fill(n) {
        val fromPool = mode match {
          case EncMode.Dict => true
          case EncMode.Fallback | EncMode.DictDelta => row < total * 2 / 5
          case _ => false
        }
        row += 1
        if (nulls == Nulls.SomeNulls && r.nextInt(5) == 0) null
        else if (fromPool) pool(r.nextInt(pool.size)) else spec.gen(r)
      }
    }
  }

  /** Nested seeds: parquet-java files of a list of structs with a map, and of a 2-level list in a struct
    * (v1 pages without dictionary, v2 pages with), and a Variant column shredded by Spark 4.1's writer
    * (`variant_shredded_spark41.parquet`, a test resource: read as the nested group it is stored as). */
  private def nested(dir: Path): Seq[Path] = {
    val schemas = Seq(
      "message m { required int64 id; optional group a (LIST) { repeated group list { optional group element { " +
        "optional int32 x; optional group m (MAP) { repeated group key_value { required binary key (UTF8); " +
        "optional double value; } } } } } }",
      "message m { optional group s { optional group l (LIST) { repeated int64 array; } optional binary t (UTF8); } }")
    val written = schemas.zipWithIndex.map { case (text, i) =>
      val layout = lmspark.testutil.GroupFiles.Layout(v2 = i == 1, dictionary = i == 1, pageRows = 20)
      lmspark.testutil.GroupFiles.write(org.apache.parquet.schema.MessageTypeParser.parseMessageType(text), layout, 300,
        new Random(77L + i), dir.resolve(s"nested-$i.parquet"))
    }
    val variant = dir.resolve("variant_shredded_spark41.parquet")
    val in = getClass.getResourceAsStream("/fuzz/variant_shredded_spark41.parquet")
    try Files.copy(in, variant) finally in.close()
    written :+ variant
  }

  /** Writes the generated seeds into `dir` and returns them with the corpus seeds found. */
  def write(dir: Path): IndexedSeq[Path] = {
    Files.createDirectories(dir)
    val specs = typeNames.map(n => TestTypes.all.find(_.name == n).getOrElse(sys.error(s"no type $n")))
    val written = configs.zipWithIndex.map { case (config, k) =>
      val columns = specs.zipWithIndex.map { case (spec, i) =>
        val nulls = if ((i + k) % 2 == 0) Nulls.SomeNulls else Nulls.Required
        TestColumn(spec, nulls, values(spec, nulls, config.mode, 7919L * k + i), s"_$i")
      }
      val p = dir.resolve(s"seed-$k-${config.codec}-${if (config.v2) "v2" else "v1"}-${config.mode}.parquet")
      TestFileWriter.write(p, config, columns, dictionaryPageSize = if (config.mode.fallsBack) Some(256) else None)
      p
    }
    val logical = Seq(
      { val p = dir.resolve("seed-logical-bloom.parquet"); LogicalFiles.write(p, 11L, dictionary = true, v2 = false,
        bloom = true, rows = 1200, rowGroupBytes = 16 * 1024L); p },
      { val p = dir.resolve("seed-logical-v2.parquet"); LogicalFiles.write(p, 12L, dictionary = false, v2 = true,
        rows = 900, rowGroupBytes = 16 * 1024L); p })
    val corpus = CodecFixtures.corpusDir.toSeq.flatMap(d => corpusNames.map(d.resolve)).filter(Files.isRegularFile(_))
    (written ++ logical ++ nested(dir) ++ corpus).toIndexedSeq
  }
}
