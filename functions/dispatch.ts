// placeholder: the handler is being written (fan-out of a schedule to every registered cluster)
export const handler = async () => ({ dispatched: 0 });
