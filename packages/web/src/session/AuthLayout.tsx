import type { ReactNode } from 'react';
import { useTitle } from '../ui/useTitle.ts';

export function AuthLayout({
  title,
  intro,
  children,
}: {
  title: string;
  intro?: ReactNode;
  children: ReactNode;
}) {
  useTitle(title);
  return (
    <main className="auth">
      <div className="auth-card">
        <p className="brand">Gatehouse</p>
        <h1>{title}</h1>
        {intro && <p className="muted">{intro}</p>}
        {children}
      </div>
    </main>
  );
}
