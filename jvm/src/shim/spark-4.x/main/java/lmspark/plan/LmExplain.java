package lmspark.plan;

import org.apache.spark.sql.ExtendedExplainGenerator;
import org.apache.spark.sql.execution.SparkPlan;

import lmspark.SparkLineGate;

/**
 * The "lmspark" section of {@code EXPLAIN EXTENDED}, named in
 * {@code spark.sql.extendedExplainProviders} (Spark 4.x): {@link ExplainSection}'s text, or why
 * lmspark is not active when this jar is not the running Spark's line. In Java so that it loads
 * under any Spark and Scala version.
 */
public final class LmExplain implements ExtendedExplainGenerator {
  @Override
  public String title() { return "lmspark"; }

  @Override
  public String generateExtendedInfo(SparkPlan plan) {
    String why = SparkLineGate.mismatch(SparkLineGate.runningVersion());
    return why == null ? ExplainSection.of(plan) : why;
  }
}
