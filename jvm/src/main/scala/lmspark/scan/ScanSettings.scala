package lmspark.scan

import org.apache.spark.sql.types.StructType

/**
 * Everything a task needs to read files for one scan, fixed on the driver at planning time.
 * Serializable; holds no Spark session.
 */
final case class ScanSettings(
    requiredSchema: StructType,
    partitionSchema: StructType,
    batchSize: Int,
    offHeapVectors: Boolean,
    caseSensitive: Boolean,
    datetimeRebaseModeInRead: String,
    preserveDictionary: Boolean = true)
