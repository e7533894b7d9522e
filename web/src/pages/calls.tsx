export default function Page() { return <p>calls</p>; }
