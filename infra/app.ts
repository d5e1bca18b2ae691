import { createServiceApp } from './service-app';

createServiceApp();
