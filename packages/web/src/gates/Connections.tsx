/** The Connections tab: the agent gates that use this gate as a sub-gate (none can yet). */
export function Connections() {
  return (
    <section className="connections">
      <h2>Used by agent gates</h2>
      <p className="empty-line">No agent gate uses this gate as a sub-gate.</p>
      <p className="muted">
        An agent gate lists its sub-gates on its own Sub-Gates tab, and they would show here with a Detach
        action. This Gatehouse has no agent gates yet, so there is nothing to list.
      </p>
    </section>
  );
}
