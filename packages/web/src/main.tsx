import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Router } from 'wouter';
import { useBrowserLocation } from 'wouter/use-browser-location';
import { App } from './App.tsx';
import { GraphQLProvider } from './client.tsx';
import './styles.css';
import { guardedLocation, guardHistoryTraversal } from './ui/unsavedChanges.ts';

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');

// Unsaved edits ask before they are dropped, by a link, a redirect or Back (before the router listens).
guardHistoryTraversal();
const useLocation = guardedLocation(useBrowserLocation);

createRoot(root).render(
  <StrictMode>
    <GraphQLProvider>
      <Router hook={useLocation}>
        <App />
      </Router>
    </GraphQLProvider>
  </StrictMode>,
);
