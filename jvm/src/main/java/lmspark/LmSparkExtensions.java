package lmspark;

import org.apache.spark.sql.SparkSessionExtensions;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * The entry point named in {@code spark.sql.extensions}. It injects lmspark's rules
 * ({@link LmInjection}) only when {@link SparkLineGate} finds the running Spark to be this jar's
 * line; otherwise it injects nothing and Spark runs as if lmspark were absent. In Java so that it
 * loads under any Spark and Scala version.
 */
public final class LmSparkExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  @Override
  public BoxedUnit apply(SparkSessionExtensions ext) {
    if (SparkLineGate.open()) LmInjection.inject(ext);
    return BoxedUnit.UNIT;
  }
}
