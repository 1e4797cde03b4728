import type { ReactElement } from 'react';
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { formatCount, formatMs, formatUsd } from '../logs/format.ts';
import { TableWrap } from '../ui/TableWrap.tsx';
import { type Bucket, bucketLabel, type ChartPoint } from './overviewWindow.ts';

/** The palette's custom properties (styles.css), so the charts follow the light or dark theme. */
const COLORS = {
  success: 'var(--chart-success)',
  error: 'var(--chart-error)',
  cost: 'var(--chart-cost)',
  p50: 'var(--chart-success)',
  p95: 'var(--chart-p95)',
  grid: 'var(--border)',
  axis: 'var(--muted)',
};

const HEIGHT = 220;

/** Requests and errors, cost, and p50/p95 latency, one chart each, over the same buckets. */
export function OverviewCharts({ points, bucket }: { points: ChartPoint[]; bucket: Bucket }) {
  const xAxis = (
    <XAxis
      dataKey="time"
      tickFormatter={(time: number) => bucketLabel(time, bucket)}
      stroke={COLORS.axis}
      fontSize={12}
      minTickGap={24}
    />
  );
  const grid = <CartesianGrid stroke={COLORS.grid} strokeDasharray="3 3" vertical={false} />;
  const label = (time: unknown) => bucketLabel(Number(time), bucket);
  /** The value axis and the tooltip, both writing values with `format`. */
  const valueAxis = (width: number, format: (value: number) => string) => [
    <YAxis
      key="axis"
      stroke={COLORS.axis}
      fontSize={12}
      width={width}
      tickFormatter={(value: number) => format(value)}
    />,
    <Tooltip key="tooltip" labelFormatter={label} formatter={(value) => format(Number(value))} />,
  ];
  const anyLatency = points.some((point) => point.p50LatencyMs !== null);

  return (
    <div className="charts">
      <Chart
        title="Requests"
        wide
        table={{
          points,
          bucket,
          columns: [
            ['Succeeded', (p) => formatCount(p.successes)],
            ['Failed', (p) => formatCount(p.errors)],
          ],
        }}
      >
        <BarChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          {grid}
          {xAxis}
          <YAxis allowDecimals={false} stroke={COLORS.axis} fontSize={12} width={40} />
          <Tooltip labelFormatter={label} formatter={(value) => formatCount(Number(value))} />
          <Legend itemSorter={null} />
          <Bar dataKey="successes" name="Succeeded" stackId="requests" fill={COLORS.success} />
          <Bar dataKey="errors" name="Failed" stackId="requests" fill={COLORS.error} />
        </BarChart>
      </Chart>
      <Chart title="Cost (USD)" table={{ points, bucket, columns: [['Cost', (p) => formatUsd(p.costUsd)]] }}>
        <BarChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          {grid}
          {xAxis}
          {valueAxis(84, formatUsd)}
          <Bar dataKey="costUsd" name="Cost" fill={COLORS.cost} />
        </BarChart>
      </Chart>
      <Chart
        title="Latency"
        empty={anyLatency ? undefined : 'No latency to show in this window.'}
        table={{
          points,
          bucket,
          columns: [
            ['p50', (p) => (p.p50LatencyMs === null ? '—' : formatMs(p.p50LatencyMs))],
            ['p95', (p) => (p.p95LatencyMs === null ? '—' : formatMs(p.p95LatencyMs))],
          ],
        }}
      >
        <LineChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          {grid}
          {xAxis}
          {valueAxis(56, formatMs)}
          <Legend itemSorter={null} />
          {(['p50', 'p95'] as const).map((percentile) => (
            <Line
              key={percentile}
              type="monotone"
              dataKey={`${percentile}LatencyMs`}
              name={percentile}
              stroke={COLORS[percentile]}
              strokeWidth={2}
              dot={points.length < 40}
            />
          ))}
        </LineChart>
      </Chart>
    </div>
  );
}

type ChartTable = {
  points: ChartPoint[];
  bucket: Bucket;
  columns: [string, (point: ChartPoint) => string][];
};

/**
 * A chart named by its title, with its data as a table under it ("Show data"), for a screen
 * reader and for anyone who wants the figures.
 */
function Chart({
  title,
  wide = false,
  empty,
  table,
  children,
}: {
  title: string;
  wide?: boolean;
  /** Shown instead of the chart when there is nothing to draw. */
  empty?: string | undefined;
  table: ChartTable;
  children: ReactElement;
}) {
  return (
    <figure className={wide ? 'chart wide' : 'chart'} aria-label={title}>
      <figcaption>{title}</figcaption>
      {empty ? (
        <p className="muted chart-empty">{empty}</p>
      ) : (
        <div role="img" aria-label={`${title} chart; its data is in the table below`}>
          <ResponsiveContainer width="100%" height={HEIGHT}>
            {children}
          </ResponsiveContainer>
        </div>
      )}
      {!empty && (
        <details className="chart-data">
          <summary>Show data</summary>
          <TableWrap label={title}>
            <table className="table compact">
              <caption className="sr-only">{title}</caption>
              <thead>
                <tr>
                  <th scope="col">{table.bucket === 'HOUR' ? 'Hour' : 'Day'}</th>
                  {table.columns.map(([name]) => (
                    <th key={name} scope="col" className="numeric">
                      {name}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {table.points.map((point) => (
                  <tr key={point.time}>
                    <th scope="row">{bucketLabel(point.time, table.bucket)}</th>
                    {table.columns.map(([name, value]) => (
                      <td key={name} className="numeric">
                        {value(point)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        </details>
      )}
    </figure>
  );
}
